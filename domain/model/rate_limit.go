package model

import (
	"fmt"
	"time"
)

// Rate is how many requests a workspace may execute: Requests per Per on
// average, and up to Burst at once after a quiet spell. The zero Rate is
// no limit.
type Rate struct {
	Requests int
	Per      time.Duration
	Burst    int
}

// Unlimited reports whether r limits nothing.
func (r Rate) Unlimited() bool { return r.Requests <= 0 || r.Per <= 0 }

// Interval is the steady spacing of requests under r (Per / Requests):
// one request's worth of allowance comes back every Interval.
func (r Rate) Interval() time.Duration { return r.Per / time.Duration(r.Requests) }

// String is r as the configuration writes it: 100/s:200, or off.
func (r Rate) String() string {
	if r.Unlimited() {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	if unit == "" {
		unit = r.Per.String()
	}
	return fmt.Sprintf("%d/%s:%d", r.Requests, unit, r.Burst)
}

// RateDecision is what a rate limiter answered for one request.
type RateDecision struct {
	Allowed bool
	// Remaining is how many more requests would be allowed right now.
	Remaining int
	// RetryAfter is, when refused, how long until one request would be
	// allowed.
	RetryAfter time.Duration
}
