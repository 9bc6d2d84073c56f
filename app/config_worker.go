package app

import (
	"errors"
	"time"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/simulator/simhttp"
)

// WorkerConfig is the workers' retries and the external systems they call
// over HTTP: the URL of `once sim` (or anything speaking its API) for the
// platform, the AI provider and the material source; empty means the
// in-process simulators. SimTimeout bounds each call.
type WorkerConfig struct {
	WorkConcurrency  int           `env:"ONCE_WORK_CONCURRENCY"`
	WorkBuffer       int           `env:"ONCE_WORK_BUFFER"`
	WorkDeadline     time.Duration `env:"ONCE_WORK_DEADLINE"`
	WorkOutageWait   time.Duration `env:"ONCE_WORK_OUTAGE_WAIT"`
	WorkerMaxRetries int           `env:"ONCE_WORKER_MAX_RETRIES"`
	SimURL           string        `env:"ONCE_SIM_URL"`
	SimTimeout       time.Duration `env:"ONCE_SIM_TIMEOUT"`
}

func defaultWorkerConfig() WorkerConfig {
	return WorkerConfig{
		WorkConcurrency: queue.DefaultConcurrency, WorkBuffer: DefaultWorkBuffer, WorkDeadline: queue.DefaultDeadline,
		WorkOutageWait: queue.DefaultOutageWait, WorkerMaxRetries: 5, SimTimeout: simhttp.DefaultTimeout,
	}
}

// DefaultWorkBuffer is how many messages of each event type a worker
// reads ahead of its slots: deep enough to see past one workspace's
// backlog of thousands to another's few jobs.
const DefaultWorkBuffer = 10000

// simClient is the client of SimURL.
func (c WorkerConfig) simClient() (*simhttp.Client, error) {
	// A connection kept for every call the worker may have out at once.
	return simhttp.NewClient(simhttp.ClientConfig{URL: c.SimURL, Timeout: c.SimTimeout, IdleConns: max(c.WorkConcurrency, simhttp.DefaultIdleConns)})
}

// Validate checks the retries and the external systems' URL.
func (c WorkerConfig) Validate() error {
	var client error
	if c.SimTimeout > 0 && c.SimURL != "" {
		_, client = c.simClient()
	}
	return errors.Join(
		invalidIf(c.WorkConcurrency < 1, "ONCE_WORK_CONCURRENCY must be at least 1"),
		invalidIf(c.WorkBuffer < c.WorkConcurrency, "ONCE_WORK_BUFFER must be at least ONCE_WORK_CONCURRENCY"),
		invalidIf(c.WorkDeadline <= 0, "ONCE_WORK_DEADLINE must be positive"),
		invalidIf(c.WorkOutageWait <= 0, "ONCE_WORK_OUTAGE_WAIT must be positive"),
		invalidIf(c.WorkerMaxRetries < 0, "ONCE_WORKER_MAX_RETRIES must not be negative"),
		invalidIf(c.SimTimeout <= 0, "ONCE_SIM_TIMEOUT must be positive"),
		invalidIf(client != nil, "ONCE_SIM_URL: %w", client),
	)
}

func (WorkerConfig) settings() settingGroup { return workerSettings }

var workerSettings = settingGroup{
	title: "Workers and external systems",
	vars: map[string]setting{
		"ONCE_WORK_CONCURRENCY": {
			help: "jobs one `once work` runs at once (they wait on external systems holding no database connection)",
			doc:  "jobs one `once work` runs at once; a job waiting on its external call holds a slot but no database connection ([the work side](delivery.md#the-work-side))",
		},
		"ONCE_WORK_BUFFER": {
			help: "messages of each event type a worker reads ahead of its slots, to share them fairly between workspaces",
			doc:  "messages of each event type a worker takes from the broker ahead of its slots: how far it looks past one workspace's backlog for another's jobs. With several workers, each holds up to this many ([the work side](delivery.md#the-work-side))",
		},
		"ONCE_WORK_DEADLINE": {
			help: "how long after its commit a job keeps trying transient failures (kinds may say otherwise)",
			doc:  "how long after its commit a job keeps trying transient failures (its destination down, our database failing over, our object store down) before it is given up on; a job that only waits its turn (a pace, a cap, a pause, its ordering key) is not failed by it; a kind may set its own ([the work side](delivery.md#the-work-side))",
		},
		"ONCE_WORK_OUTAGE_WAIT": {
			help: "how long a job parked for a destination that is down waits before it asks again, unless an answer from it wakes it sooner",
			doc:  "how long a job parked for a destination (or marketplace) whose breaker is open waits before it asks again on its own; one job per cooldown comes back to probe it, and the first call it answers wakes the others at once ([the work side](delivery.md#the-work-side))",
		},
		"ONCE_WORKER_MAX_RETRIES": {
			help: "runs of a job that may fail by its own fault (not an outage, its destination's or ours) before it is given up on",
			doc:  "runs of a job that may fail by its own fault (an unclassified error, a panic, a webhook receiver's refusal such as `404`) before the worker gives up on it (task and operation `failed`, event in the dead letters); the job waits, parked in the outbox, 1 s doubling up to 30 s, ±50 %, between them. A destination's outage, throttling or 5xx, and our own database or object store unavailable, spend none of them ([the schedule](delivery.md#how-long-a-failing-job-keeps-trying))",
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
