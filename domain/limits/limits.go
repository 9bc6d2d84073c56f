package limits

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// Outcomes of a check, as Observer hears them.
const (
	OutcomeAllowed = "allowed"
	// OutcomeWaited: admitted by the cap after waiting its turn.
	OutcomeWaited  = "waited"
	OutcomeLimited = "limited"
	// OutcomeAbandoned: the request ended (its client gone) while it
	// waited for a slot of the cap.
	OutcomeAbandoned = "abandoned"
	// OutcomeUnmetered: the rate limiter's store could not be asked, and
	// the request went through.
	OutcomeUnmetered = "unmetered"
)

// Observer counts the checks by policy (PolicyWrites, PolicyConcurrency)
// and outcome, for metrics. It never hears the workspace: a label per
// tenant would make the series unbounded.
type Observer interface {
	ObserveLimit(policy, outcome string)
}

// Defaults of Config.
const (
	// DefaultStoreTimeout bounds one question to the rate limiter's store.
	// It is asked inside the request's transaction, so a slow answer
	// holds a connection of the pool.
	DefaultStoreTimeout = 100 * time.Millisecond
	// DefaultPause is how long the store is not asked after it failed.
	DefaultPause = time.Second
)

// Config is what Limits enforces.
type Config struct {
	Policy Policy
	// MaxConcurrent is each workspace's cap on units of work in flight in
	// this process (< 1: none).
	MaxConcurrent int
	// QueueTimeout is the longest a unit of work over the cap waits for a
	// slot of its workspace before it is refused (<= 0: refused at once).
	QueueTimeout time.Duration
	StoreTimeout time.Duration // default DefaultStoreTimeout
	Pause        time.Duration // default DefaultPause
}

// Limits enforces a workspace's rate and its cap on concurrent work. A nil
// *Limits enforces nothing.
type Limits struct {
	policy    Policy
	admission *Admission
	limiter   ports.RateLimiter
	clock     ports.Clock
	obs       Observer
	log       *slog.Logger
	timeout   time.Duration
	pause     time.Duration

	mu        sync.Mutex
	failing   bool      // the store's last answer was an error
	skipUntil time.Time // the store is not asked before then
}

// New returns the Limits of cfg; obs may be nil.
func New(cfg Config, limiter ports.RateLimiter, clock ports.Clock, obs Observer, log *slog.Logger) *Limits {
	l := &Limits{
		policy: cfg.Policy, admission: NewAdmission(AdmissionConfig{Max: cfg.MaxConcurrent, Wait: cfg.QueueTimeout}), limiter: limiter, clock: clock, obs: obs, log: log,
		timeout: cfg.StoreTimeout, pause: cfg.Pause,
	}
	if l.timeout <= 0 {
		l.timeout = DefaultStoreTimeout
	}
	if l.pause <= 0 {
		l.pause = DefaultPause
	}
	return l
}

// Admission is the cap on concurrent work (for tests: they synchronise on it).
func (l *Limits) Admission() *Admission { return l.admission }

// Enter admits one unit of database work of workspace. Over the cap it
// waits its turn behind the workspace's other work (see Admission), and is
// refused with CodeRateLimited when the queue is full, the wait runs out,
// or ctx ends first. leave gives the slot back; call it once the work is
// done.
func (l *Limits) Enter(ctx context.Context, workspace uuid.UUID) (leave func(), err error) {
	if l == nil || l.admission.Max() < 1 {
		return func() {}, nil
	}
	waited, err := l.admission.Enter(ctx, workspace)
	if err != nil {
		r := &Refusal{Policy: PolicyConcurrency, Quota: l.admission.Max(), RetryAfter: ConcurrencyRetryAfter}
		if errors.Is(err, ErrQueueFull) || errors.Is(err, ErrWaitTimedOut) {
			l.observe(PolicyConcurrency, OutcomeLimited)
			return nil, refused(r, fmt.Sprintf(
				"this workspace already has %d requests in progress on this server and no slot came free in time; retry after Retry-After (with the same Idempotency-Key)", r.Quota))
		}
		// Nobody may be listening any more; whoever is gets the same
		// answer: nothing ran.
		l.observe(PolicyConcurrency, OutcomeAbandoned)
		return nil, refused(r, "the request ended while it waited for one of this workspace's slots; retry after Retry-After (with the same Idempotency-Key)")
	}
	if waited {
		l.observe(PolicyConcurrency, OutcomeWaited)
	} else {
		l.observe(PolicyConcurrency, OutcomeAllowed)
	}
	var once sync.Once
	return func() { once.Do(func() { l.admission.Leave(workspace) }) }, nil
}

// Spend charges one write to workspace's rate, or refuses it with
// CodeRateLimited (RetryAfter set) when the rate is used up. Call it only
// for a request that is about to execute: never for a replay.
//
// If the store cannot be asked, the write goes through unmetered (see the
// package comment).
func (l *Limits) Spend(ctx context.Context, workspace uuid.UUID) error {
	if l == nil {
		return nil
	}
	rate := l.policy.For(workspace)
	if rate.Unlimited() {
		return nil
	}
	if l.paused() {
		l.observe(PolicyWrites, OutcomeUnmetered)
		return nil
	}
	askCtx, cancel := context.WithTimeout(ctx, l.timeout)
	d, err := l.limiter.Take(askCtx, workspace, rate)
	cancel()
	if err != nil {
		if ctx.Err() == nil { // the request's own end is not the store's failure
			l.storeFailed(err)
		}
		l.observe(PolicyWrites, OutcomeUnmetered)
		return nil
	}
	l.storeAnswered()
	if !d.Allowed {
		l.observe(PolicyWrites, OutcomeLimited)
		r := &Refusal{Policy: PolicyWrites, Quota: rate.Requests, Window: rate.Per, Burst: rate.Burst, RetryAfter: d.RetryAfter}
		return refused(r, fmt.Sprintf(
			"this workspace is over its rate of %d writes per %s; retry after Retry-After with the same Idempotency-Key", rate.Requests, rate.Per))
	}
	l.observe(PolicyWrites, OutcomeAllowed)
	return nil
}

func (l *Limits) paused() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.clock.Now().Before(l.skipUntil)
}

// storeFailed pauses asking the store and says so once per outage.
func (l *Limits) storeFailed(err error) {
	l.mu.Lock()
	first := !l.failing
	l.failing = true
	l.skipUntil = l.clock.Now().Add(l.pause)
	l.mu.Unlock()
	if first && l.log != nil {
		l.log.Warn("rate limiter unavailable: writes go through unmetered until it answers again",
			slog.String("error", err.Error()))
	}
}

func (l *Limits) storeAnswered() {
	l.mu.Lock()
	back := l.failing
	l.failing = false
	l.mu.Unlock()
	if back && l.log != nil {
		l.log.Info("rate limiter answers again: writes are metered")
	}
}

func (l *Limits) observe(policy, outcome string) {
	if l.obs != nil {
		l.obs.ObserveLimit(policy, outcome)
	}
}
