package app

import (
	"errors"
	"time"

	"github.com/oncehq/once/domain/dispatch"
)

// RelayConfig: the process that commits an event publishes it itself
// (dispatch.Relay); auto is on with a real queue. RelayHold is how long
// its events stay its own before the Dispatchers may deliver them.
type RelayConfig struct {
	Relay     string        `env:"ONCE_RELAY"`
	RelayHold time.Duration `env:"ONCE_RELAY_HOLD"`
}

func defaultRelayConfig() RelayConfig {
	return RelayConfig{Relay: RelayAuto, RelayHold: dispatch.DefaultRelayHold}
}

// Validate checks the switch and the hold.
func (c RelayConfig) Validate() error {
	return errors.Join(
		invalidIf(c.Relay != RelayAuto && c.Relay != RelayOn && c.Relay != RelayOff, "ONCE_RELAY=%q must be auto, true or false", c.Relay),
		invalidIf(outside(c.RelayHold, time.Second, time.Minute), "ONCE_RELAY_HOLD must be between 1s and 1m: longer than a publish and a mark, short enough that a crashed writer's events are not late for long"),
	)
}

func (RelayConfig) settings() settingGroup { return relaySettings }

var relaySettings = settingGroup{
	title: "Relay",
	vars: map[string]setting{
		"ONCE_RELAY": {
			help: "auto, true or false: the process that commits an event publishes it itself, the Dispatchers make up for crashes (auto: on unless ONCE_QUEUE=memory)",
			doc:  "`true`: the process that commits an event publishes it itself right after the commit and marks it dispatched; the Dispatchers deliver what it could not (it crashed, the broker was down). `auto` is `true` unless `ONCE_QUEUE=memory`. An API-only `once serve` with the relay connects to the broker as a publisher. See [delivery.md](delivery.md#the-writer-relays-its-own-events)",
		},
		"ONCE_RELAY_HOLD": {
			help: "how long a committed event stays its writer's before a Dispatcher may deliver it (1s to 1m)",
			doc:  "how long a committed event stays its writer's before a Dispatcher may deliver it (1s to 1m): the delay of a crashed writer's events",
		},
	},
}
