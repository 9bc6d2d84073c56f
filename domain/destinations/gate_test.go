package destinations_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
)

func TestTheConcurrencyCapHoldsCallsAtOnce(t *testing.T) {
	g, c := newGate(destinations.Quota{Concurrency: 2}, destinations.BreakerConfig{})
	first := grant(t, g, shop)
	grant(t, g, shop)
	assert.Equal(t, destinations.Wait{Until: start.Add(50 * time.Millisecond), Why: destinations.WhyBusy, Of: shop}, refuse(t, g, shop))
	grant(t, g, otherShop)

	first.Done(succeeded)
	first.Done(succeeded) // a second Done frees nothing more
	assert.Equal(t, 1, state(t, g, shop).InFlight)
	grant(t, g, shop)
	refuse(t, g, shop)
	c.Advance(time.Hour)
	assert.Equal(t, destinations.WhyBusy, refuse(t, g, shop).Why, "only a Done frees a slot")
}

// A busy refusal says how often a call of the destination ends at its
// cap, from how long its calls took, so a worker holding thousands of
// jobs for it (a receiver's backlog after an outage) gives each a turn
// instead of sending them all back to be refused again.
func TestABusyRefusalSaysHowOftenACallEnds(t *testing.T) {
	g, c := newGate(destinations.Quota{Concurrency: 4}, destinations.BreakerConfig{})
	var first []*destinations.Permit
	for range 4 {
		first = append(first, grant(t, g, shop))
	}
	assert.Zero(t, refuse(t, g, shop).Every, "no call ended yet: nothing known")
	c.Advance(40 * time.Millisecond)
	for _, p := range first {
		p.Done(succeeded)
	}
	var second []*destinations.Permit
	for range 4 {
		second = append(second, grant(t, g, shop))
	}
	assert.Equal(t, 10*time.Millisecond, refuse(t, g, shop).Every, "4 calls of 40 ms at once: one ends every 10 ms")

	// A timeout is not a call's usual length; a straggler counts as at
	// most 4 times the average.
	c.Advance(15 * time.Second)
	second[0].Done(failed)
	grant(t, g, shop)
	assert.Equal(t, 10*time.Millisecond, refuse(t, g, shop).Every, "a failure teaches no length")
	second[1].Done(succeeded)
	grant(t, g, shop)
	assert.Equal(t, 55*time.Millisecond/4, refuse(t, g, shop).Every, "40 ms + (160 ms − 40 ms) ÷ 8 = 55 ms, ÷ 4")
}

func TestABusyRefusalSpendsNoToken(t *testing.T) {
	g, _ := newGate(destinations.Quota{Concurrency: 1, Rate: 1, Burst: 2}, destinations.BreakerConfig{})
	first := grant(t, g, shop)
	refuse(t, g, shop)
	refuse(t, g, shop)
	first.Done(succeeded)
	grant(t, g, shop)
}

func TestPauseHoldsADestinationUntilItsTimeOrResume(t *testing.T) {
	g, c := newGate(destinations.Quota{}, destinations.BreakerConfig{})
	inFlight := grant(t, g, shop)

	require.NoError(t, g.Pause(ctx, shop, start.Add(time.Minute)))
	assert.Equal(t, destinations.Wait{Until: start.Add(time.Minute), Why: destinations.WhyPaused, Of: shop}, refuse(t, g, shop))
	assert.True(t, state(t, g, shop).Paused)
	grant(t, g, otherShop)
	inFlight.Done(succeeded)
	c.Advance(time.Minute)
	grant(t, g, shop)
	assert.False(t, state(t, g, shop).Paused)

	require.NoError(t, g.Pause(ctx, shop, time.Time{}))
	c.Advance(24 * time.Hour)
	assert.Equal(t, destinations.Wait{Until: c.Now().Add(time.Minute), Why: destinations.WhyPaused, Of: shop}, refuse(t, g, shop))
	require.NoError(t, g.Resume(ctx, shop))
	grant(t, g, shop)

	require.NoError(t, g.Pause(ctx, provider, time.Time{})) // never seen: paused all the same
	refuse(t, g, provider)
}

func TestSnapshotCountsPerDestinationSortedByName(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 1, Burst: 1}, testBreaker)
	grant(t, g, provider).Done(failed)
	grant(t, g, shop).Done(throttled(time.Second))
	refuse(t, g, shop)
	refuse(t, g, shop)
	c.Advance(time.Second)
	inFlight := grant(t, g, shop)

	snapshot := g.Snapshot()
	require.Len(t, snapshot, 2)
	assert.Equal(t, destinations.State{
		Destination: "ai/p", Breaker: destinations.BreakerClosed, Failures: 1,
	}, snapshot[0])
	assert.Equal(t, destinations.State{
		Destination: "shop/a", InFlight: 1, Rate: 0.7, Breaker: destinations.BreakerClosed,
		ThrottledUntil: start.Add(time.Second), PacedWaits: 2, Throttles: 1,
	}, snapshot[1])
	inFlight.Done(succeeded)
}

func TestIdleDestinationsAreForgotten(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 1, Burst: 1}, testBreaker)
	idle := model.Destination{System: "shop", Account: "idle"}
	busy := model.Destination{System: "shop", Account: "busy"}
	broken := model.Destination{System: "shop", Account: "broken"}
	paused := model.Destination{System: "shop", Account: "paused"}
	grant(t, g, idle).Done(succeeded)
	refuse(t, g, idle)
	inFlight := grant(t, g, busy)
	for range testBreaker.Failures {
		grant(t, g, broken).Done(failed)
		c.Advance(time.Second)
	}
	require.NoError(t, g.Pause(ctx, paused, time.Time{}))

	c.Advance(10 * time.Minute)
	grant(t, g, shop)
	var names []string
	for _, s := range g.Snapshot() {
		names = append(names, s.Destination)
	}
	assert.Equal(t, []string{"shop/a", "shop/broken", "shop/busy", "shop/paused"}, names)

	// Forgotten, it starts afresh.
	assert.Zero(t, state(t, g, shop).PacedWaits)
	grant(t, g, idle)
	assert.Zero(t, state(t, g, idle).PacedWaits)
	inFlight.Done(succeeded)
}

func TestTheGateIsSafeForConcurrentUse(t *testing.T) {
	const capacity = 3
	g, c := newGate(destinations.Quota{Concurrency: capacity}, testBreaker)
	accounts := []model.Destination{shop, otherShop, {System: "shop", Account: "c"}}
	var inFlight [3]atomic.Int32
	var peak [3]atomic.Int32
	var wg sync.WaitGroup
	for worker := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for call := range 500 {
				i := (worker + call) % len(accounts)
				permit, _ := g.Try(accounts[i])
				if permit == nil {
					continue
				}
				now := inFlight[i].Add(1)
				for seen := peak[i].Load(); now > seen && !peak[i].CompareAndSwap(seen, now); seen = peak[i].Load() {
				}
				g.Snapshot()
				inFlight[i].Add(-1)
				permit.Done([]destinations.Outcome{succeeded, throttled(0), abandoned}[call%3])
				if call%50 == 0 {
					c.Advance(time.Second)
				}
			}
		}()
	}
	wg.Wait()
	for i, d := range accounts {
		assert.LessOrEqual(t, peak[i].Load(), int32(capacity), "%s", d)
		assert.Zero(t, state(t, g, d).InFlight, "%s", d)
	}
}
