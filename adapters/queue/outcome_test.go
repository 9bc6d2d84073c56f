package queue

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// Every shape of error a run may end with is read into the outcome the
// worker acts on, in the one place that reads the error chain: what the
// destinations learn (call), and what comes of the job (kind, and so
// whether it is handed back, retried spending an attempt or not, or
// given up on).
func TestClassifyReadsEveryErrorShapeIntoItsOutcome(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	turn := &waitFor{until: now.Add(time.Minute), wait: model.JobWait{Kind: model.JobWaitPaced, For: "shopify/shop-1", Reason: "paced"}}
	ours := domain.Errorf(domain.CodeUnavailable, "the database is failing over")
	fault := domain.Errorf(domain.CodeValidation, "payload is not an order")
	http503 := domain.Errorf(domain.CodeUnavailable, "shop answered 503")
	throttle := &platformerr.Throttled{RetryAfter: 3 * time.Second, Cause: errors.New("429")}
	appThrottle := &platformerr.Throttled{RetryAfter: 4 * time.Second, Scope: platformerr.ScopeApplication}
	stopped := func(cause error) error { return &interrupted{sanitizedError{text: "stopping", cause: cause}} }

	answered := CallResult{}
	failed := CallResult{Failed: true}
	abandoned := CallResult{Abandoned: true}

	// What the retry policy makes of the outcome, for a job with one
	// attempt spent of two.
	const (
		givenUp    = "given up"
		waitsFree  = "waits, no attempt spent"
		spendsOne  = "retried, one attempt spent"
		notRetried = "not retried" // succeeded or handed back: later never asks
	)
	cases := []struct {
		name  string
		err   error
		kind  outcomeKind
		call  CallResult
		retry string
	}{
		{"nil", nil, kindSucceeded, answered, notRetried},
		{"an unclassified error", errors.New("boom"), kindOwnFailure, abandoned, spendsOne},
		{"a recovered panic", fmt.Errorf("panic occurred: %v", "nil map"), kindOwnFailure, abandoned, spendsOne},
		{"CodeInternal", domain.Errorf(domain.CodeInternal, "bug"), kindOwnFailure, abandoned, spendsOne},
		{"CodeRateLimited of ours", domain.Errorf(domain.CodeRateLimited, "busy"), kindOwnFailure, abandoned, spendsOne},
		{"a wrong message", fault, kindPermanent, abandoned, givenUp},
		{"a wrong message, sanitized", Sanitized(fault), kindPermanent, abandoned, givenUp},
		{"a dependency of ours down", ours, kindOutage, abandoned, waitsFree},
		{"a dependency of ours down, wrapped", fmt.Errorf("save: %w", ours), kindOutage, abandoned, waitsFree},
		{"the destination down", platformerr.Upstream(http503), kindOutage, failed, waitsFree},
		{"the destination down, unclassified", platformerr.Upstream(errors.New("connection reset")), kindOutage, failed, waitsFree},
		{"the destination down, sanitized", Sanitized(platformerr.Upstream(http503)), kindOutage, failed, waitsFree},
		{"the destination's permanent answer, marked upstream", platformerr.Upstream(fault), kindPermanent, failed, givenUp},
		{"throttled", throttle, kindThrottled, CallResult{Throttled: true, RetryAfter: 3 * time.Second}, waitsFree},
		{"throttled, the application's quota", appThrottle, kindThrottled, CallResult{Throttled: true, RetryAfter: 4 * time.Second, OfApplication: true}, waitsFree},
		{"throttled, marked upstream", platformerr.Upstream(throttle), kindThrottled, CallResult{Throttled: true, RetryAfter: 3 * time.Second}, waitsFree},
		{"throttled, sanitized", Sanitized(throttle), kindThrottled, CallResult{Throttled: true, RetryAfter: 3 * time.Second}, waitsFree},
		{"refused, unavailable", platformerr.Refused(http503), kindRefused, answered, spendsOne},
		{"refused, a wrong message", platformerr.Refused(fault), kindRefused, answered, spendsOne},
		{"refused, marked upstream", platformerr.Refused(platformerr.Upstream(http503)), kindRefused, answered, spendsOne},
		{"refused with a 429", platformerr.Refused(throttle), kindThrottled, answered, waitsFree},
		{"its turn", turn, kindWaitTurn, abandoned, waitsFree},
		{"interrupted", stopped(errors.New("context canceled")), kindInterrupted, abandoned, notRetried},
		{"interrupted during an outage", stopped(platformerr.Upstream(http503)), kindInterrupted, abandoned, notRetried},
		{"interrupted after a 429", stopped(throttle), kindInterrupted, CallResult{Throttled: true, RetryAfter: 3 * time.Second}, notRetried},
		{"interrupted after a refusal", stopped(platformerr.Refused(http503)), kindInterrupted, answered, notRetried},
		{"interrupted, not started", stopped(nil), kindInterrupted, abandoned, notRetried},
		{"not parked", &redeliver{sanitizedError{text: "parking failed", cause: ours}}, kindRedelivered, abandoned, notRetried},
	}
	p := retryPolicy{maxAttempts: 2, fallback: time.Hour, initial: time.Second, maxInterval: 30 * time.Second, multiplier: 2}
	m := ports.Message{CreatedAt: now, Attempts: 1, Destination: "shopify/shop-1"}
	seen := map[outcomeKind]bool{}
	for _, c := range cases {
		o := classify(c.err)
		seen[o.kind] = true
		require.Equal(t, c.kind, o.kind, "%s: kind", c.name)
		require.Equal(t, c.call, o.call, "%s: call", c.name)
		require.Equal(t, c.call, CallResultOf(c.err), "%s: CallResultOf", c.name)
		require.Equal(t, c.kind == kindInterrupted || c.kind == kindRedelivered, o.handedBack(), "%s: handed back", c.name)

		retry := notRetried
		if o.kind != kindSucceeded && !o.handedBack() {
			switch _, attempts, _, ok := p.next(m, o, now); {
			case !ok:
				retry = givenUp
			case attempts == m.Attempts:
				retry = waitsFree
			case attempts == m.Attempts+1:
				retry = spendsOne
			default:
				retry = fmt.Sprintf("spent %d attempts", attempts-m.Attempts)
			}
		}
		require.Equal(t, c.retry, retry, "%s: retry", c.name)
	}
	for k := kindSucceeded; k <= kindRedelivered; k++ {
		require.True(t, seen[k], "no case reads into %s", k)
	}
}
