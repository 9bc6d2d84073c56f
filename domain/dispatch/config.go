package dispatch

import (
	"errors"
	"fmt"
	"time"
)

// Config tunes a Dispatcher. Zero values take the defaults below.
type Config struct {
	// Owner names this instance in locked_by; every instance needs its own
	// (host name and process id, say), or fencing cannot tell them apart.
	Owner string
	// Batch is the most events claimed from one workspace per round, and
	// published in one Publish call. Default 100.
	Batch int
	// Lease is how long a claim holds before another instance may take the
	// events over. It runs from the claim, also while a batch waits for its
	// workspace's batch before it: every publish ends within two thirds of
	// it (see publishWindow). Default 30s.
	Lease time.Duration
	// MaxAttempts is the number of attempts after which an event is
	// dead-lettered. An attempt is a publish the broker refused or that
	// failed for a reason of the event's own, or a takeover of its expired
	// lease (the Dispatcher holding it crashed or hung); a broker that
	// cannot be reached costs no attempt. Default 10.
	MaxAttempts int
	// BackoffBase and BackoffMax bound the retry delay: attempt n waits a
	// random time in [0, min(BackoffMax, BackoffBase·2^(n-1))] (full
	// jitter). Defaults 1s and 10m.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// PollInterval is the fallback when no wake-up arrives; each wait is
	// jittered by ±20% so instances drift apart. Default 1s.
	PollInterval time.Duration
	// WorkspacesPerRound is the most workspaces one round looks at.
	// Default 100.
	WorkspacesPerRound int
	// Concurrency is the most batches in flight at once (claimed and not
	// yet marked), over all workspaces: claims, publishes and marks of
	// different batches overlap up to this bound. Each in flight holds a
	// database connection only while it claims or marks. 1 is the
	// unpipelined Dispatcher. Default 4.
	Concurrency int
	// BreakerFailures is how many publishes in a row must find the broker
	// unreachable before the Dispatcher stops publishing as a whole (its
	// circuit breaker opens). Default 3.
	BreakerFailures int
	// BreakerOpen is how long the breaker then stays open before one probe
	// publish (half-open): success resumes publishing at once, failure
	// opens it again. Default 5s.
	BreakerOpen time.Duration
}

// Defaults.
const (
	DefaultBatch              = 100
	DefaultLease              = 30 * time.Second
	DefaultMaxAttempts        = 10
	DefaultBackoffBase        = time.Second
	DefaultBackoffMax         = 10 * time.Minute
	DefaultPollInterval       = time.Second
	DefaultWorkspacesPerRound = 100
	DefaultConcurrency        = 4
	DefaultBreakerFailures    = 3
	DefaultBreakerOpen        = 5 * time.Second
)

// publishWindow is how long after its claim a batch's publish must have
// ended, whether the batch waited for its turn or not: two thirds of the
// lease, so that the mark lands well before another instance may take the
// events over.
func (c Config) publishWindow() time.Duration { return c.Lease * 2 / 3 }

// minPublishWindow is the least of its publish window a batch must have
// left when its turn comes, or it goes back uncounted instead: half the
// window (a third of the lease), so a batch that waited is never sent to
// the broker with less than half the time one that did not wait gets.
func (c Config) minPublishWindow() time.Duration { return c.Lease / 3 }

// Bounds of a Dispatcher's batches (Validate): a claim of more events holds
// its rows and its connection too long, more batches in flight take more
// connections than a pool has to spare.
const (
	MaxBatch       = 10000
	MaxConcurrency = 64
)

// ConfigError is a field of Config outside the bounds a Dispatcher works
// within: Field Rule, or Field Rule Other when the bound is another field.
type ConfigError struct {
	Field string
	Rule  string
	Other string
}

func (e *ConfigError) Error() string {
	msg := "dispatcher " + e.Field + " " + e.Rule
	if e.Other != "" {
		msg += " " + e.Other
	}
	return msg
}

// Validate checks c as New runs it, its defaults filled in: every count at
// least 1 (batches and their concurrency at most MaxBatch and
// MaxConcurrency), every duration positive, BackoffMax at least
// BackoffBase. It returns one *ConfigError per field out of bounds,
// joined, or nil. The owner is New's to check.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, rule, other string) {
		errs = append(errs, &ConfigError{Field: field, Rule: rule, Other: other})
	}
	if c.Batch < 1 || c.Batch > MaxBatch {
		bad("Batch", fmt.Sprintf("must be between 1 and %d", MaxBatch), "")
	}
	if c.Concurrency < 1 || c.Concurrency > MaxConcurrency {
		bad("Concurrency", fmt.Sprintf("must be between 1 and %d", MaxConcurrency), "")
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"MaxAttempts", c.MaxAttempts}, {"WorkspacesPerRound", c.WorkspacesPerRound}, {"BreakerFailures", c.BreakerFailures}} {
		if n.v < 1 {
			bad(n.field, "must be at least 1", "")
		}
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"Lease", c.Lease}, {"PollInterval", c.PollInterval}, {"BackoffBase", c.BackoffBase}, {"BreakerOpen", c.BreakerOpen}} {
		if d.v <= 0 {
			bad(d.field, "must be positive", "")
		}
	}
	if c.BackoffMax < c.BackoffBase {
		bad("BackoffMax", "must be at least", "BackoffBase")
	}
	return errors.Join(errs...)
}

// withDefaults fills the zero fields with the defaults above.
func (c Config) withDefaults() Config {
	c.Batch = orDefault(c.Batch, DefaultBatch)
	c.MaxAttempts = orDefault(c.MaxAttempts, DefaultMaxAttempts)
	c.WorkspacesPerRound = orDefault(c.WorkspacesPerRound, DefaultWorkspacesPerRound)
	c.Concurrency = orDefault(c.Concurrency, DefaultConcurrency)
	c.BreakerFailures = orDefault(c.BreakerFailures, DefaultBreakerFailures)
	c.Lease = orDefault(c.Lease, DefaultLease)
	c.BackoffBase = orDefault(c.BackoffBase, DefaultBackoffBase)
	c.BackoffMax = orDefault(c.BackoffMax, DefaultBackoffMax)
	c.PollInterval = orDefault(c.PollInterval, DefaultPollInterval)
	c.BreakerOpen = orDefault(c.BreakerOpen, DefaultBreakerOpen)
	return c
}
