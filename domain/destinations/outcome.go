package destinations

import (
	"context"
	"time"

	"github.com/oncehq/once/domain/platformerr"
)

// OutcomeKind is how a call to a destination ended, as far as the
// destination's pace and breaker care.
type OutcomeKind int

const (
	// Abandoned: our side failed before or after the call (the database,
	// our context ending), so the call says nothing about the destination.
	// It is the zero value, so an outcome left unset teaches nothing.
	Abandoned OutcomeKind = iota
	// Succeeded: the destination answered, even with a permanent refusal.
	Succeeded
	// Throttled: the destination answered 429 (too many requests).
	Throttled
	// Failed: the call failed upstream and may succeed later: a 5xx, a
	// timeout, a refused connection.
	Failed
)

func (k OutcomeKind) String() string {
	switch k {
	case Succeeded:
		return "succeeded"
	case Throttled:
		return "throttled"
	case Failed:
		return "failed"
	}
	return "abandoned"
}

// Outcome is what a Permit's call taught.
type Outcome struct {
	Kind OutcomeKind
	// RetryAfter is, for Throttled, how long the destination asked to
	// wait (0: it did not say).
	RetryAfter time.Duration
	// Scope is, for Throttled, what the destination said was spent: its
	// account's quota (platformerr.ScopeAccount, also when it did not say)
	// or its platform's whole application's (ScopeApplication), which the
	// Gate then paces for every account of the platform.
	Scope platformerr.Scope
	// QuotaUsed of QuotaLimit is the destination's own count of its quota
	// spent, when it reports one (Shopify's X-Shopify-Shop-Api-Call-Limit
	// "32/40"); QuotaLimit 0: no report.
	QuotaUsed, QuotaLimit int
}

// OutcomeOf sorts the error a job's call returned (nil: it succeeded) by
// the marks platformerr puts on it: a Throttled is Throttled, an Upstream
// error is Failed, any other error that is retryable (ours, or our context
// ending) is Abandoned, and the rest are the destination's permanent
// answers, so Succeeded. An error after our context ended is Abandoned
// whatever it is: the call was cut short by us.
func OutcomeOf(ctx context.Context, err error) Outcome {
	if err == nil {
		return Outcome{Kind: Succeeded}
	}
	if ctx.Err() != nil {
		return Outcome{Kind: Abandoned}
	}
	if retryAfter, ok := platformerr.ThrottledFor(err); ok {
		return Outcome{Kind: Throttled, RetryAfter: retryAfter, Scope: platformerr.ThrottledScope(err)}
	}
	if platformerr.IsUpstream(err) {
		return Outcome{Kind: Failed}
	}
	if platformerr.Retryable(ctx, err) {
		return Outcome{Kind: Abandoned}
	}
	return Outcome{Kind: Succeeded}
}
