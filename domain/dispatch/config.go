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
	// events over. Default 30s.
	Lease time.Duration
	// MaxAttempts is the number of failed publishes after which an event is
	// dead-lettered. Default 10.
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
)

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
	setDur(&c.Lease, DefaultLease)
	setDur(&c.BackoffBase, DefaultBackoffBase)
	setDur(&c.BackoffMax, DefaultBackoffMax)
	setDur(&c.PollInterval, DefaultPollInterval)
	switch {
	case c.Batch < 0 || c.MaxAttempts < 0 || c.WorkspacesPerRound < 0:
		return c, domain.Errorf(domain.CodeValidation, "dispatcher batch, max attempts and workspaces per round must be positive")
	case c.Lease < 0 || c.BackoffBase < 0 || c.BackoffMax < 0 || c.PollInterval < 0:
		return c, domain.Errorf(domain.CodeValidation, "dispatcher durations must be positive")
	case c.BackoffMax < c.BackoffBase:
		return c, domain.Errorf(domain.CodeValidation, "dispatcher backoff max %s is below backoff base %s", c.BackoffMax, c.BackoffBase)
	}
	return c, nil
}
