package queue

import (
	"time"

	"github.com/oncehq/once/domain/scheduling"
)

// Destinations paces the calls to each destination a job names
// (ports.Message.Destination): how many at once, how fast, and whether
// its circuit breaker lets them through. The application adapts
// domain/destinations to it; nil lets every call through.
type Destinations interface {
	// Try asks to start one call to destination now. Granted, done is
	// non-nil and must be called once with how the call went; refused,
	// refused says until when and why.
	Try(destination string) (done func(CallResult), refused Refusal)
}

// Refusal is the Destinations' answer when it grants no call
// (scheduling.Refusal, which the slots decide from).
type Refusal = scheduling.Refusal

// The refusals the slots treat apart (see scheduling).
const (
	WhyPaced       = scheduling.WhyPaced
	WhyBreakerOpen = scheduling.WhyBreakerOpen
	WhyBusy        = scheduling.WhyBusy
	WhyProbing     = scheduling.WhyProbing
	WhyPaused      = scheduling.WhyPaused
)

// CallResult is how a job's call to its destination went, as its error
// tells: what the destinations learns from.
type CallResult struct {
	// Throttled: the destination answered 429, asking to wait RetryAfter
	// (0: unsaid); OfApplication when it said the quota spent is the
	// application's on the whole platform, not the seller's own.
	Throttled     bool
	RetryAfter    time.Duration
	OfApplication bool
	// Failed: a transient failure of the call itself (5xx, timeout,
	// refused connection), which counts toward the breaker.
	Failed bool
	// Abandoned: the job failed on our side or was interrupted, or made no
	// call (domain.ReportNoCall: a duplicate, a cancelled job); the call's
	// fate teaches nothing, and a probe it held goes to another job.
	Abandoned bool
}
