package testkit

import (
	"sync"
	"time"

	"github.com/oncehq/once/ports"
)

// ManualClock is a ports.Clock that stands still until the test moves it:
// what the service decides from its clock (a rate limit refilling, above
// all) then happens when the test says, however slow the machine.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

var _ ports.Clock = (*ManualClock)(nil)

// NewManualClock returns a clock stopped at the wall clock's now.
func NewManualClock() *ManualClock {
	return NewManualClockAt(time.Now().UTC().Truncate(time.Microsecond))
}

// NewManualClockAt returns a clock stopped at now, for a test whose
// arithmetic wants a known start.
func NewManualClockAt(now time.Time) *ManualClock {
	return &ManualClock{now: now}
}

// Now implements ports.Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d on.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
