package dispatch

import (
	"time"

	"github.com/oncehq/once/domain"
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

// withDefaults fills zero fields and refuses values that cannot work.
func (c Config) withDefaults() (Config, error) {
	if c.Owner == "" {
		return c, domain.Errorf(domain.CodeValidation, "dispatcher owner must not be empty")
	}
	setInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setDur := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	setInt(&c.Batch, DefaultBatch)
	setInt(&c.MaxAttempts, DefaultMaxAttempts)
	setInt(&c.WorkspacesPerRound, DefaultWorkspacesPerRound)
	setInt(&c.Concurrency, DefaultConcurrency)
	setInt(&c.BreakerFailures, DefaultBreakerFailures)
	setDur(&c.Lease, DefaultLease)
	setDur(&c.BackoffBase, DefaultBackoffBase)
	setDur(&c.BackoffMax, DefaultBackoffMax)
	setDur(&c.PollInterval, DefaultPollInterval)
	setDur(&c.BreakerOpen, DefaultBreakerOpen)
	switch {
	case c.Batch < 0 || c.MaxAttempts < 0 || c.WorkspacesPerRound < 0 || c.BreakerFailures < 0 || c.Concurrency < 0:
		return c, domain.Errorf(domain.CodeValidation, "dispatcher batch, max attempts, workspaces per round, concurrency and breaker failures must be positive")
	case c.Lease < 0 || c.BackoffBase < 0 || c.BackoffMax < 0 || c.PollInterval < 0 || c.BreakerOpen < 0:
		return c, domain.Errorf(domain.CodeValidation, "dispatcher durations must be positive")
	case c.BackoffMax < c.BackoffBase:
		return c, domain.Errorf(domain.CodeValidation, "dispatcher backoff max %s is below backoff base %s", c.BackoffMax, c.BackoffBase)
	}
	return c, nil
}
