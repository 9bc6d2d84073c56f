package destinations

import (
	"sync"
	"time"

	"github.com/oncehq/once/ports"
)

// steadyClock is the gate's clock: the wall's (ports.Clock has no
// monotonic reading), less every step back it noticed (NTP, a VM
// resumed). The times a gate keeps in the fleet's records (a bucket's
// last refill, a Retry-After's or a cooldown's end) are read on this
// clock, so a step back of this process's wall leaves them where they
// were: every wait keeps what it had left, and the bucket refills from
// the new reading on. Read on the wall, an hour's step back would refuse
// every call to a paced destination for an hour. The times the gate
// hands out (Wait.Until, a Snapshot's) and takes in (a pause's end) are
// the wall's: outside and inside convert them.
type steadyClock struct {
	wall ports.Clock

	mu sync.Mutex
	// last is the latest wall reading; skew the steps back noticed, summed.
	last time.Time
	skew time.Duration
}

// minStep is the least step back the clock acts on. Two calls that read
// the clock just before they take the gate's lock may take it in the
// other order, microseconds or milliseconds apart: that is no step, and
// moving the times back by it would hand out tokens never earned. NTP
// slews an offset below 128 ms and steps a larger one; a step shorter
// than minStep costs a wait at most that much longer.
const minStep = 100 * time.Millisecond

func newSteadyClock(wall ports.Clock) *steadyClock { return &steadyClock{wall: wall} }

// Now is the wall's reading plus the steps back noticed so far.
func (c *steadyClock) Now() time.Time {
	now := c.wall.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch back := c.last.Sub(now); {
	case c.last.IsZero() || back <= 0:
		c.last = now
	case back >= minStep:
		c.skew += back
		c.last = now
	}
	return now.Add(c.skew)
}

// outside is t, a time on this clock, on the wall's; zero stays zero.
func (c *steadyClock) outside(t time.Time) time.Time { return c.shift(t, -1) }

// inside is t, a time on the wall's clock, on this one; zero stays zero.
func (c *steadyClock) inside(t time.Time) time.Time { return c.shift(t, 1) }

func (c *steadyClock) shift(t time.Time, sign time.Duration) time.Time {
	if t.IsZero() {
		return t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return t.Add(sign * c.skew)
}
