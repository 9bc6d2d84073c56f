package queue

import "time"

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

// Refusal is the Destinations' answer when it grants no call.
type Refusal struct {
	// Until is the earliest time worth asking again.
	Until time.Time
	// Why is what the wait is for: WhyPaced, WhyBusy, WhyBreakerOpen,
	// WhyProbing, WhyPaused, or another the slots know nothing of (the
	// destination's state could not be read).
	Why string
	// Of is the destination whose state refused: the one asked for, or
	// its platform, whose breaker holds all of its accounts ("" : the one
	// asked for).
	Of string
	// Every is, for a paced refusal, the time between two calls at the
	// fastest the destination goes; for a busy one, between two of its
	// calls ending (0: unknown).
	Every time.Duration
}

// The refusals the slots treat apart.
const (
	// WhyPaced: the destination's rate is spent, or it asked to wait.
	WhyPaced = "paced"
	// WhyBreakerOpen: the destination, or its platform, is down.
	WhyBreakerOpen = "breaker_open"
	// WhyBusy: the destination has its cap of calls in flight.
	WhyBusy = "busy"
	// WhyProbing: the destination's breaker is half-open and its probe
	// is out.
	WhyProbing = "probing"
	// WhyPaused: an operator paused the destination.
	WhyPaused = "paused"
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
