package app

import (
	"errors"
	"time"

	"github.com/oncehq/once/domain/dispatch"
)

// DispatchConfig tunes the Dispatchers (dispatch.Config, whose constants
// are the defaults), their circuit breaker included: how many publishes
// in a row must find the broker unreachable before it stops publishing as
// a whole, and how long it then waits between probes.
type DispatchConfig struct {
	DispatchBatch int `env:"ONCE_DISPATCH_BATCH"`
	// DispatchConcurrency is how many batches a Dispatcher has in flight
	// at once (claim, publish and mark of different batches overlap).
	DispatchConcurrency     int           `env:"ONCE_DISPATCH_CONCURRENCY"`
	DispatchLease           time.Duration `env:"ONCE_DISPATCH_LEASE"`
	DispatchMaxAttempts     int           `env:"ONCE_DISPATCH_MAX_ATTEMPTS"`
	DispatchBackoffBase     time.Duration `env:"ONCE_DISPATCH_BACKOFF_BASE"`
	DispatchBackoffMax      time.Duration `env:"ONCE_DISPATCH_BACKOFF_MAX"`
	DispatchPollInterval    time.Duration `env:"ONCE_DISPATCH_POLL_INTERVAL"`
	DispatchBreakerFailures int           `env:"ONCE_DISPATCH_BREAKER_FAILURES"`
	DispatchBreakerOpen     time.Duration `env:"ONCE_DISPATCH_BREAKER_OPEN"`
}

func defaultDispatchConfig() DispatchConfig {
	return DispatchConfig{
		DispatchBatch: dispatch.DefaultBatch, DispatchConcurrency: dispatch.DefaultConcurrency,
		DispatchLease: dispatch.DefaultLease, DispatchMaxAttempts: dispatch.DefaultMaxAttempts,
		DispatchBackoffBase: dispatch.DefaultBackoffBase, DispatchBackoffMax: dispatch.DefaultBackoffMax,
		DispatchPollInterval:    dispatch.DefaultPollInterval,
		DispatchBreakerFailures: dispatch.DefaultBreakerFailures, DispatchBreakerOpen: dispatch.DefaultBreakerOpen,
	}
}

// dispatcher is the Dispatcher's configuration but its owner.
func (c DispatchConfig) dispatcher() dispatch.Config {
	return dispatch.Config{
		Batch: c.DispatchBatch, Concurrency: c.DispatchConcurrency, Lease: c.DispatchLease, MaxAttempts: c.DispatchMaxAttempts,
		BackoffBase: c.DispatchBackoffBase, BackoffMax: c.DispatchBackoffMax, PollInterval: c.DispatchPollInterval,
		BreakerFailures: c.DispatchBreakerFailures, BreakerOpen: c.DispatchBreakerOpen,
	}
}

// dispatchVars names the variable of each field of dispatch.Config the
// group sets, for the errors of dispatch.Config.Validate.
var dispatchVars = map[string]string{
	"Batch": "ONCE_DISPATCH_BATCH", "Concurrency": "ONCE_DISPATCH_CONCURRENCY", "Lease": "ONCE_DISPATCH_LEASE",
	"MaxAttempts": "ONCE_DISPATCH_MAX_ATTEMPTS", "BackoffBase": "ONCE_DISPATCH_BACKOFF_BASE", "BackoffMax": "ONCE_DISPATCH_BACKOFF_MAX",
	"PollInterval": "ONCE_DISPATCH_POLL_INTERVAL", "BreakerFailures": "ONCE_DISPATCH_BREAKER_FAILURES", "BreakerOpen": "ONCE_DISPATCH_BREAKER_OPEN",
}

// Validate checks the bounds of a deployment on the lease and the breaker,
// stricter than the Dispatcher's own (its tests go below them), then the
// Dispatcher's (dispatch.Config.Validate), naming the variables.
func (c DispatchConfig) Validate() error {
	var errs []error
	stricter := map[string]bool{}
	if c.DispatchLease < time.Second {
		stricter["Lease"] = true
		errs = append(errs, errors.New("ONCE_DISPATCH_LEASE must be at least 1s: a lease shorter than a publish re-delivers everything"))
	}
	if c.DispatchBreakerOpen < 10*time.Millisecond || c.DispatchBreakerOpen > 10*time.Minute {
		stricter["BreakerOpen"] = true
		errs = append(errs, errors.New("ONCE_DISPATCH_BREAKER_OPEN must be between 10ms and 10m: events wait that long after the broker is back"))
	}
	cfg := c.dispatcher()
	cfg.WorkspacesPerRound = dispatch.DefaultWorkspacesPerRound // not a setting
	for _, err := range unjoin(cfg.Validate()) {
		bound, ok := err.(*dispatch.ConfigError)
		if !ok || stricter[bound.Field] {
			continue
		}
		msg := dispatchVars[bound.Field] + " " + bound.Rule
		if bound.Other != "" {
			msg += " " + dispatchVars[bound.Other]
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// unjoin is the errors errors.Join joined into err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

func (DispatchConfig) settings() settingGroup { return dispatchSettings }

var dispatchSettings = settingGroup{
	title: "Dispatcher",
	vars: map[string]setting{
		"ONCE_DISPATCH_BATCH": {
			help: "events a Dispatcher claims per round",
			doc:  "events claimed per workspace per round",
		},
		"ONCE_DISPATCH_CONCURRENCY": {
			help: "batches a Dispatcher has in flight at once",
			doc:  "batches one Dispatcher has in flight at once: claim, publish and mark of different batches overlap (1: one after another)",
		},
		"ONCE_DISPATCH_LEASE": {
			help: "how long a claimed batch stays a Dispatcher's before another may take it (at least 1s)",
			doc:  "how long a claim holds before another Dispatcher may take it over",
		},
		"ONCE_DISPATCH_MAX_ATTEMPTS": {
			help: "publish attempts before an event is dead-lettered",
			doc:  "attempts before `dead_letter`: publishes the broker refused and takeovers of an expired lease; an unreachable broker costs none",
		},
		"ONCE_DISPATCH_BACKOFF_BASE": {
			help: "first wait before an event's next publish attempt",
			doc:  "exponential backoff with full jitter between attempts: the first wait",
		},
		"ONCE_DISPATCH_BACKOFF_MAX": {
			help: "longest wait between an event's publish attempts",
			doc:  "the longest wait of that backoff (at least `ONCE_DISPATCH_BACKOFF_BASE`)",
		},
		"ONCE_DISPATCH_POLL_INTERVAL": {
			help: "how often a Dispatcher looks for due events when no notification comes",
			doc:  "fallback poll (±20 % jitter) when no wake-up arrives",
		},
		"ONCE_DISPATCH_BREAKER_FAILURES": {
			help: "publishes in a row that must find the broker unreachable before a Dispatcher pauses publishing",
			doc:  "publishes in a row that find the broker unreachable before the Dispatcher stops publishing as a whole",
		},
		"ONCE_DISPATCH_BREAKER_OPEN": {
			help: "wait between probes of a broker found unreachable",
			doc:  "how long it then waits between probes (also the longest wait after the broker is back)",
		},
	},
}
