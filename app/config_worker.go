package app

import (
	"errors"
	"time"

	"github.com/oncehq/once/adapters/simulator/simhttp"
)

// WorkerConfig is the workers' retries and the external systems they call
// over HTTP: the URL of `once sim` (or anything speaking its API) for the
// platform, the AI provider and the material source; empty means the
// in-process simulators. SimTimeout bounds each call.
type WorkerConfig struct {
	WorkerMaxRetries int           `env:"ONCE_WORKER_MAX_RETRIES"`
	SimURL           string        `env:"ONCE_SIM_URL"`
	SimTimeout       time.Duration `env:"ONCE_SIM_TIMEOUT"`
}

func defaultWorkerConfig() WorkerConfig {
	return WorkerConfig{WorkerMaxRetries: 5, SimTimeout: simhttp.DefaultTimeout}
}

// simClient is the client of SimURL.
func (c WorkerConfig) simClient() (*simhttp.Client, error) {
	return simhttp.NewClient(simhttp.ClientConfig{URL: c.SimURL, Timeout: c.SimTimeout})
}

// Validate checks the retries and the external systems' URL.
func (c WorkerConfig) Validate() error {
	var client error
	if c.SimTimeout > 0 && c.SimURL != "" {
		_, client = c.simClient()
	}
	return errors.Join(
		invalidIf(c.WorkerMaxRetries < 0, "ONCE_WORKER_MAX_RETRIES must not be negative"),
		invalidIf(c.SimTimeout <= 0, "ONCE_SIM_TIMEOUT must be positive"),
		invalidIf(client != nil, "ONCE_SIM_URL: %w", client),
	)
}

func (WorkerConfig) settings() settingGroup { return workerSettings }

var workerSettings = settingGroup{
	title: "Workers and external systems",
	vars: map[string]setting{
		"ONCE_WORKER_MAX_RETRIES": {
			help: "retries of a failing job before it is given up on (a dead letter); waits of 1s doubling to 30s, ±50%: 5 wait about 31s",
			doc:  "retries of a transient handler failure before the worker gives up on the job (task and operation `failed`, event in the dead letters); the waits start at 1 s and double up to 30 s, ±50 %: the default 5 wait about 31 s in all, plus six runs of the job ([the schedule](delivery.md#how-long-a-failing-job-takes-to-give-up))",
		},
		"ONCE_SIM_URL": {
			help: "URL of `once sim`, the platform, AI provider and material source the workers call; empty: in-process simulators",
			doc:  "the `once sim` the workers call for the platform, AI provider and material source; empty: the in-process simulators",
		},
		"ONCE_SIM_TIMEOUT": {
			help: "bound of each call to them",
			doc:  "bound of one call to `ONCE_SIM_URL`",
		},
	},
}
