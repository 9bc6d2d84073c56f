package destinations_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// fleet is n gates, as n workers, sharing one store and one clock, with
// the "shop" system capped at calls at once.
func fleet(n, calls int, store ports.DestinationStates) ([]*destinations.Gate, *testkit.ManualClock) {
	c := testkit.NewManualClockAt(start)
	cfg := destinations.Config{Systems: map[string]destinations.Quota{"shop": {Concurrency: calls}}}
	gates := make([]*destinations.Gate, n)
	for i := range gates {
		gates[i] = destinations.NewGate(cfg, c, store)
	}
	return gates, c
}

// A destination's cap counts the calls of every worker: two workers
// each under the cap do not hold twice the cap together.
func TestTwoGatesNeverExceedTheCapTogether(t *testing.T) {
	gates, c := fleet(2, 3, memory.NewDestinationStates())
	a, b := gates[0], gates[1]
	first := grant(t, a, shop)
	grant(t, a, shop)
	grant(t, b, shop)
	w := refuse(t, b, shop)
	assert.Equal(t, destinations.WhyBusy, w.Why)
	assert.Equal(t, destinations.WhyBusy, refuse(t, a, shop).Why)
	assert.Equal(t, 3, state(t, b, shop).FleetInFlight)
	assert.Equal(t, 1, state(t, b, shop).InFlight)
	grant(t, b, otherShop) // another destination's cap is its own

	first.Done(succeeded)
	c.Advance(w.Until.Sub(start))
	grant(t, b, shop) // a's call ended: b reads the record again and takes its slot
	refuse(t, a, shop)
}

// Many calls at once through two gates: the store's record decides, and
// the calls in flight across both never pass the cap.
func TestTwoGatesRacingKeepTheCap(t *testing.T) {
	const limit = 4
	gates, _ := fleet(2, limit, memory.NewDestinationStates())
	var inFlight, most atomic.Int64
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := gates[i%2]
			for range 50 {
				p, _ := g.Try(shop)
				if p == nil {
					continue
				}
				n := inFlight.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				inFlight.Add(-1)
				p.Done(succeeded)
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, most.Load(), int64(limit))
	assert.Positive(t, most.Load())
}

// A worker killed during its calls never ends them: its leases run out
// after CallLease, and then the others take their slots.
func TestADeadWorkersCallsStopCountingWhenTheirLeasesEnd(t *testing.T) {
	gates, c := fleet(2, 2, memory.NewDestinationStates())
	dead, alive := gates[0], gates[1]
	grant(t, dead, shop)
	grant(t, dead, shop)
	w := refuse(t, alive, shop)
	assert.Equal(t, destinations.Wait{Until: start.Add(50 * time.Millisecond), Why: destinations.WhyBusy, Of: shop}, w)

	c.Advance(destinations.DefaultCallLease - time.Millisecond)
	assert.Equal(t, destinations.WhyBusy, refuse(t, alive, shop).Why, "still leased")
	c.Advance(time.Millisecond)
	grant(t, alive, shop)
	grant(t, alive, shop)
	refuse(t, alive, shop)
}

// A call longer than its lease still counts while its worker writes the
// destination's record: each write renews the leases of the gate's calls
// in flight, so a slow transfer's cap is not handed out twice by a fleet
// whose other worker sees the lease end.
func TestALongCallsLeaseIsRenewedByItsGatesNextWrite(t *testing.T) {
	gates, c := fleet(2, 2, memory.NewDestinationStates())
	slow, other := gates[0], gates[1]
	grant(t, slow, shop) // outlives its lease
	c.Advance(destinations.DefaultCallLease - time.Second)
	grant(t, slow, shop).Done(succeeded) // a short call of the same worker writes the record

	c.Advance(2 * time.Second) // the first lease's first end is past
	grant(t, other, shop)
	assert.Equal(t, destinations.WhyBusy, refuse(t, other, shop).Why, "the slow call still counts")
}

// A lease whose removal could not be written is dropped by its gate's
// next write of the record: the gate knows its own calls in flight.
func TestALeaseLeftBehindIsDroppedByItsGatesNextCall(t *testing.T) {
	store := &flakyStates{DestinationStates: memory.NewDestinationStates()}
	gates, _ := fleet(2, 2, store)
	a, b := gates[0], gates[1]
	p := grant(t, a, shop)
	store.failing.Store(true)
	p.Done(succeeded) // its lease stays in the record
	store.failing.Store(false)
	assert.Equal(t, 1, state(t, a, shop).FleetInFlight)

	grant(t, a, shop) // writes its one live lease, not the one left behind
	grant(t, b, shop)
	refuse(t, b, shop)
}

// A lease that cannot be written refuses the call for a moment as any
// state the store cannot keep (the worker waits, the job is not lost),
// and holds no slot.
func TestALeaseThatCannotBeWrittenRefusesForAMoment(t *testing.T) {
	store := &flakyStates{DestinationStates: memory.NewDestinationStates()}
	gates, _ := fleet(1, 1, store)
	store.failing.Store(true)
	w := refuse(t, gates[0], shop)
	assert.Equal(t, destinations.Wait{Until: start.Add(time.Second), Why: destinations.WhyUnknown, Of: shop}, w)
	assert.Zero(t, state(t, gates[0], shop).InFlight)
	store.failing.Store(false)
	grant(t, gates[0], shop)
}

// A capped call costs the store one write when it starts (its lease) and
// one when it ends (the lease given back), and no read, not even the first
// call to a destination never seen: its lease is written at version 0,
// which checks that nobody wrote the record.
func TestACappedCallCostsOneWriteAtEachEnd(t *testing.T) {
	store := &countingStates{DestinationStates: memory.NewDestinationStates()}
	gates, _ := fleet(1, 8, store)
	for range 5 {
		grant(t, gates[0], shop).Done(succeeded)
	}
	assert.Equal(t, int64(10), store.swaps.Load())
	assert.Zero(t, store.loads.Load())
}

// flakyStates fails every Swap while failing is set; reads still answer.
type flakyStates struct {
	*memory.DestinationStates
	failing atomic.Bool
}

func (f *flakyStates) Swap(ctx context.Context, key string, version int64, state []byte, keep time.Duration) (model.DestinationRecord, bool, error) {
	if f.failing.Load() {
		return model.DestinationRecord{}, false, context.DeadlineExceeded
	}
	return f.DestinationStates.Swap(ctx, key, version, state, keep)
}
