package app

import (
	"errors"
	"time"
)

// ShutdownConfig is how a process starts and stops (docs/deploy.md,
// rolling restarts): it has StartTimeout to connect to what it needs and
// start its servers and workers; on SIGTERM /readyz answers 503 and the API keeps serving for
// ShutdownDrain (longer than the balancer's health check takes to see it:
// interval × fall); then the process stops within ShutdownTimeout,
// requests in flight and jobs finished or handed back.
type ShutdownConfig struct {
	StartTimeout    time.Duration `env:"ONCE_START_TIMEOUT"`
	ShutdownDrain   time.Duration `env:"ONCE_SHUTDOWN_DRAIN"`
	ShutdownTimeout time.Duration `env:"ONCE_SHUTDOWN_TIMEOUT"`
}

func defaultShutdownConfig() ShutdownConfig {
	return ShutdownConfig{StartTimeout: time.Minute, ShutdownDrain: 5 * time.Second, ShutdownTimeout: 30 * time.Second}
}

// Validate checks both bounds.
func (c ShutdownConfig) Validate() error {
	return errors.Join(
		invalidIf(outside(c.StartTimeout, time.Second, 10*time.Minute), "ONCE_START_TIMEOUT=%s must be between 1s and 10m: the process gets that long to connect and start", c.StartTimeout),
		invalidIf(outside(c.ShutdownDrain, 0, 5*time.Minute), "ONCE_SHUTDOWN_DRAIN=%s must be between 0 (no drain) and 5m: longer than the balancer's health check needs to take the instance out", c.ShutdownDrain),
		invalidIf(outside(c.ShutdownTimeout, time.Second, time.Hour), "ONCE_SHUTDOWN_TIMEOUT=%s must be between 1s and 1h: requests in flight and jobs get that long to finish", c.ShutdownTimeout),
	)
}

func (ShutdownConfig) settings() settingGroup { return shutdownSettings }

var shutdownSettings = settingGroup{
	title: "Shutdown",
	vars: map[string]setting{
		"ONCE_START_TIMEOUT": {
			help: "how long a process gets to connect to its database, broker and stores and start serving; past it, it exits naming this setting",
			doc:  "how long a process gets to connect to its database, broker and object store and start its servers and workers; past it, it exits with an error naming this setting (between `1s` and `10m`; fx's own default of 15 s was seen exceeded by a worker starting on a machine at a load of 36)",
		},
		"ONCE_SHUTDOWN_DRAIN": {
			help: "on SIGTERM, how long /readyz answers 503 while the API still serves (with Connection: close); longer than the balancer's check interval × fall",
			doc:  "on SIGTERM, how long `/readyz` answers 503 while the API still serves (each response with `Connection: close`), for the load balancer to take the instance out: longer than its check interval × the failures it needs ([rolling restarts](deploy.md#several-serve-behind-a-load-balancer-rolling-restarts)); `0` stops at once",
		},
		"ONCE_SHUTDOWN_TIMEOUT": {
			help: "then how long requests in flight and jobs get to finish before the process exits anyway",
			doc:  "then how long requests in flight and jobs get to finish before the process exits anyway (between `1s` and `1h`)",
		},
	},
}
