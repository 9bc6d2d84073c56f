package app

import (
	"fmt"
	"os"
)

// ProcessConfig says what `once serve` runs besides the API and names the
// process.
type ProcessConfig struct {
	// Dispatcher and Worker say whether `once serve` also runs them.
	Dispatcher bool   `env:"ONCE_DISPATCHER"`
	Worker     bool   `env:"ONCE_WORKER"`
	InstanceID string `env:"ONCE_INSTANCE_ID"`
	// Demo seeds a demo workspace and member on the embedded store so that
	// `make run` has something to call.
	Demo bool `env:"ONCE_DEMO"`
}

func defaultProcessConfig() ProcessConfig {
	return ProcessConfig{Dispatcher: true, Worker: true, Demo: true}
}

// Demo identities seeded on the embedded store.
const (
	DemoWorkspaceID = "00000000-0000-4000-8000-000000000001"
	DemoUserID      = "00000000-0000-4000-8000-0000000000aa"
)

// Owner names this process in outbox leases (locked_by).
func (c ProcessConfig) Owner() string {
	if c.InstanceID != "" {
		return c.InstanceID
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

func (ProcessConfig) settings() settingGroup { return processesSettings }

var processesSettings = settingGroup{
	title: "Processes",
	vars: map[string]setting{
		"ONCE_DISPATCHER": {
			help: "`once serve` runs a Dispatcher too",
			doc:  "`once serve` also runs a Dispatcher",
		},
		"ONCE_WORKER": {
			help: "`once serve` runs the workers too",
			doc:  "`once serve` also runs the workers",
		},
		"ONCE_INSTANCE_ID": {
			help:       "this process's name in outbox leases; empty: host-pid",
			doc:        "this instance's name in leases (`locked_by`)",
			docDefault: "hostname-pid",
		},
		"ONCE_DEMO": {
			help: "seed a demo workspace and member on the embedded store",
			doc:  "on the embedded store, seed a demo workspace and print a token",
		},
	},
}
