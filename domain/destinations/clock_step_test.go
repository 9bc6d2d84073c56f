package destinations_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain/destinations"
)

// The gate's clock is the wall's, which NTP may step back: what was
// "now" a moment ago is then in the future. A wait the gate named (a
// call's turn, a Retry-After, a breaker's cooldown) keeps the length it
// had left, and the bucket refills from the new reading on: a step back
// of an hour must not refuse every call to the destination for an hour.
// (The gate learns of a step at its next reading: the time between its
// last reading and the step is not seen, so each subtest reads the gate
// just before the step.)
func TestABackwardStepOfTheClockDoesNotStallThePace(t *testing.T) {
	const step = time.Hour

	t.Run("the bucket refills from the new reading", func(t *testing.T) {
		g, c := newGate(destinations.Quota{Rate: 2, Burst: 2}, destinations.BreakerConfig{})
		grant(t, g, shop).Done(succeeded)
		grant(t, g, shop).Done(succeeded)
		refuse(t, g, shop)

		c.Advance(-step)
		assert.Equal(t, c.Now().Add(500*time.Millisecond), refuse(t, g, shop).Until, "a turn at the rate from now")
		c.Advance(500 * time.Millisecond)
		grant(t, g, shop).Done(succeeded)
	})

	t.Run("a Retry-After keeps what it had left", func(t *testing.T) {
		g, c := newGate(destinations.Quota{Rate: 4, Burst: 4}, destinations.BreakerConfig{})
		grant(t, g, shop).Done(throttled(3 * time.Second))
		c.Advance(time.Second)
		refuse(t, g, shop)

		c.Advance(-step)
		assert.Equal(t, c.Now().Add(2*time.Second), refuse(t, g, shop).Until)
		c.Advance(2 * time.Second)
		grant(t, g, shop).Done(succeeded)
	})

	t.Run("an open breaker keeps the cooldown it had left", func(t *testing.T) {
		g, c := newGate(destinations.Quota{}, destinations.BreakerConfig{Failures: 1, Cooldown: 5 * time.Second})
		grant(t, g, provider).Done(failed)
		c.Advance(time.Second)
		refuse(t, g, provider)

		c.Advance(-step)
		assert.Equal(t, c.Now().Add(4*time.Second), refuse(t, g, provider).Until)
		c.Advance(4 * time.Second)
		grant(t, g, provider).Done(succeeded)
	})

	t.Run("calls that read the clock out of order are no step", func(t *testing.T) {
		// Two calls read the clock before they take the gate's lock, and
		// take it in the other order: the later reading first.
		g, c := newGate(destinations.Quota{Rate: 2, Burst: 1}, destinations.BreakerConfig{})
		first := grant(t, g, shop)
		c.Advance(10 * time.Millisecond)
		refuse(t, g, shop)
		c.Advance(-10 * time.Millisecond)
		first.Done(succeeded)

		c.Advance(500*time.Millisecond - time.Millisecond)
		refuse(t, g, shop) // no token earned early
		c.Advance(time.Millisecond)
		grant(t, g, shop)
	})
}
