package scheduling

import "time"

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
