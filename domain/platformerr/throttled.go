package platformerr

import (
	"errors"
	"time"

	"github.com/oncehq/once/domain"
)

// Throttled is an external system's "too many requests" (HTTP 429): the
// request was not executed, and the system asks to wait RetryAfter
// (zero: it did not say). It is CodeUnavailable, so it is Retryable; the
// worker paces the destination down by it and spends no attempt of the
// job on it.
type Throttled struct {
	RetryAfter time.Duration
	// Scope is what the system throttled: ScopeApplication when it says
	// the whole application's quota is spent (every seller's calls), or
	// ScopeAccount (the zero value, also when it does not say) for the
	// one seller's.
	Scope Scope
	// Cause is the adapter's error, kept for logs.
	Cause error
}

func (t *Throttled) Error() string {
	if t.Cause != nil {
		return "throttled: " + t.Cause.Error()
	}
	return "throttled"
}

func (t *Throttled) Unwrap() []error {
	return []error{domain.Errorf(domain.CodeUnavailable, "throttled by the external system"), t.Cause}
}

// Scope is the level at which a system throttles.
type Scope string

const (
	// ScopeAccount: the seller's (the shop's) own quota.
	ScopeAccount Scope = ""
	// ScopeApplication: the quota of our application on the platform, which
	// every seller's calls spend together (SP-API counts quotas per
	// application as well as per selling partner and application).
	ScopeApplication Scope = "application"
)

// ThrottledScope is what err, a Throttled, says was throttled
// (ScopeAccount for any other error).
func ThrottledScope(err error) Scope {
	var t *Throttled
	if errors.As(err, &t) {
		return t.Scope
	}
	return ScopeAccount
}

// ThrottledFor reports whether err is a Throttled, and the wait it asks for.
func ThrottledFor(err error) (time.Duration, bool) {
	var t *Throttled
	if errors.As(err, &t) {
		return t.RetryAfter, true
	}
	return 0, false
}

// Upstream marks a transient error of the external call itself (a 5xx, a
// timeout, a refused connection), as opposed to one of our own (the
// database, the object store): the worker counts it against the
// destination's circuit breaker and spends no attempt of the job on it.
func Upstream(err error) error {
	if err == nil {
		return nil
	}
	return &upstream{err: err}
}

type upstream struct{ err error }

func (u *upstream) Error() string { return u.err.Error() }
func (u *upstream) Unwrap() error { return u.err }

// IsUpstream reports whether err was marked by Upstream.
func IsUpstream(err error) bool {
	var u *upstream
	return errors.As(err, &u)
}
