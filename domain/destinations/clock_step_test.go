package destinations_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/testsupport/testkit"
)

// A record's times are the wall clocks of the workers that wrote it,
// which NTP may step back or which may run ahead of each other: what one
// wrote as "now" is then in another's future. A wait the gate names (a
// call's turn, a Retry-After, a breaker's cooldown) lasts at most its own
// length from the reader's now, and the bucket refills from the new
// reading on: a step back of an hour must not refuse every call to the
// destination for an hour, on this worker or any other.
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

	t.Run("a Retry-After lasts at most its length", func(t *testing.T) {
		g, c := newGate(destinations.Quota{Rate: 4, Burst: 4}, destinations.BreakerConfig{})
		grant(t, g, shop).Done(throttled(3 * time.Second))
		c.Advance(time.Second)
		refuse(t, g, shop)

		c.Advance(-step)
		assert.Equal(t, c.Now().Add(3*time.Second), refuse(t, g, shop).Until)
		c.Advance(3 * time.Second)
		grant(t, g, shop).Done(succeeded)
	})

	t.Run("an open breaker waits at most its cooldown", func(t *testing.T) {
		g, c := newGate(destinations.Quota{}, destinations.BreakerConfig{Failures: 1, Cooldown: 5 * time.Second})
		grant(t, g, provider).Done(failed)
		c.Advance(time.Second)
		refuse(t, g, provider)

		c.Advance(-step)
		assert.Equal(t, c.Now().Add(5*time.Second), refuse(t, g, provider).Until)
		c.Advance(5 * time.Second)
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

// A worker whose clock runs an hour ahead writes the fleet's records in
// its future; another worker, on the right time, still paces and probes
// the destination at the destination's own lengths, not the hour.
func TestAWorkerWhoseClockRunsAheadDoesNotStallTheFleet(t *testing.T) {
	store := memory.NewDestinationStates()
	cfg := destinations.Config{
		Systems: map[string]destinations.Quota{"shop": {Rate: 2, Burst: 1}},
		Breaker: destinations.BreakerConfig{Failures: 1, Cooldown: 5 * time.Second},
	}
	ahead := testkit.NewManualClockAt(start.Add(time.Hour))
	onTime := testkit.NewManualClockAt(start)
	fast := destinations.NewGate(cfg, ahead, store)
	right := destinations.NewGate(cfg, onTime, store)

	grant(t, fast, shop).Done(succeeded)
	assert.Equal(t, onTime.Now().Add(500*time.Millisecond), refuse(t, right, shop).Until, "the next turn at the rate, from the reader's now")
	onTime.Advance(500 * time.Millisecond)
	grant(t, right, shop).Done(succeeded)

	grant(t, fast, provider).Done(failed)
	assert.Equal(t, onTime.Now().Add(5*time.Second), refuse(t, right, provider).Until, "the cooldown, from the reader's now")
	onTime.Advance(5 * time.Second)
	grant(t, right, provider).Done(succeeded)
}

// A call that never reached its destination (our side failed, or the job
// had nothing to call) gives its token back: a worker spinning on a
// database outage, or a run of duplicates, does not empty the bucket the
// destination's real calls need.
func TestAnAbandonedCallGivesItsTokenBack(t *testing.T) {
	g, _ := newGate(destinations.Quota{Rate: 1, Burst: 2}, destinations.BreakerConfig{})
	for range 5 {
		grant(t, g, shop).Done(abandoned)
	}
	grant(t, g, shop).Done(succeeded)
	grant(t, g, shop).Done(succeeded)
	refuse(t, g, shop)
}
