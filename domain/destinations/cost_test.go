package destinations_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/testkit"
)

// countingStates counts the round trips a Gate makes to its store.
type countingStates struct {
	*memory.DestinationStates
	loads, swaps atomic.Int64
}

func (c *countingStates) Load(ctx context.Context, key string) (model.DestinationRecord, error) {
	c.loads.Add(1)
	return c.DestinationStates.Load(ctx, key)
}

func (c *countingStates) Swap(ctx context.Context, key string, version int64, state []byte, keep time.Duration) (model.DestinationRecord, bool, error) {
	c.swaps.Add(1)
	return c.DestinationStates.Swap(ctx, key, version, state, keep)
}

// The store is asked a bounded amount per call: a destination with a
// rate writes its token (one Swap a permit), one without reads its record
// at most once per StateTTL, a refusal and a plain success write nothing.
func TestACallCostsTheStoreOneWriteAtMost(t *testing.T) {
	store := &countingStates{DestinationStates: memory.NewDestinationStates()}
	c := testkit.NewManualClockAt(start)
	g := destinations.NewGate(destinations.Config{Systems: map[string]destinations.Quota{"shop": {Rate: 5, Burst: 5}}}, c, store)

	for range 5 {
		grant(t, g, shop).Done(succeeded)
	}
	assert.Equal(t, int64(5), store.swaps.Load(), "one write per permit of a paced destination")
	assert.Equal(t, int64(1), store.loads.Load(), "and one read, the first")
	refuse(t, g, shop)
	assert.Equal(t, int64(5), store.swaps.Load(), "a refusal writes nothing")

	store.loads.Store(0)
	store.swaps.Store(0)
	for range 100 {
		grant(t, g, provider).Done(succeeded)
	}
	assert.Zero(t, store.swaps.Load(), "an unpaced destination's plain calls write nothing")
	assert.Equal(t, int64(1), store.loads.Load(), "and read once per StateTTL")
	c.Advance(destinations.DefaultStateTTL)
	grant(t, g, provider).Done(succeeded)
	assert.Equal(t, int64(2), store.loads.Load())
}

// A store that cannot be asked refuses the call for a moment, saying so,
// and holds no slot.
func TestAStoreThatCannotBeAskedRefusesForAMoment(t *testing.T) {
	c := testkit.NewManualClockAt(start)
	g := destinations.NewGate(destinations.Config{Systems: map[string]destinations.Quota{"shop": {Concurrency: 1}}}, c, failingStates{})
	w := refuse(t, g, shop)
	assert.Equal(t, destinations.Wait{Until: start.Add(time.Second), Why: destinations.WhyUnknown, Of: shop}, w)
	s := state(t, g, shop)
	assert.Zero(t, s.InFlight)
	assert.Equal(t, uint64(1), s.StateErrors)
	require.Error(t, g.Pause(ctx, shop, time.Time{}), "an operator is told nothing was paused")
}

type failingStates struct{}

func (failingStates) Load(context.Context, string) (model.DestinationRecord, error) {
	return model.DestinationRecord{}, context.DeadlineExceeded
}

func (failingStates) Swap(context.Context, string, int64, []byte, time.Duration) (model.DestinationRecord, bool, error) {
	return model.DestinationRecord{}, false, context.DeadlineExceeded
}

// A call to a marketplace's shop reads the marketplace's record every
// time (another worker's failure must stop it at once), unless the call
// writes that record anyway (a token of the application's bucket), whose
// compare-and-set then checks it: one read per call, no more.
func TestAMarketplaceCallReadsItsRecordOnceUnlessItWritesIt(t *testing.T) {
	store := &countingStates{DestinationStates: memory.NewDestinationStates()}
	c := testkit.NewManualClockAt(start)
	cfg := destinations.Config{
		Platforms:    map[string]bool{"shop": true, "app": true},
		Applications: map[string]destinations.Quota{"app": {Rate: 1000, Burst: 1000}},
	}
	g := destinations.NewGate(cfg, c, store)
	grant(t, g, shopNamed("a")).Done(succeeded)

	store.loads.Store(0)
	store.swaps.Store(0)
	for range 10 {
		grant(t, g, shopNamed("a")).Done(succeeded)
	}
	assert.Equal(t, int64(10), store.loads.Load(), "the marketplace's record, read once per call")
	assert.Zero(t, store.swaps.Load())

	app := model.Destination{System: "app", Account: "x"}
	grant(t, g, app).Done(succeeded)
	store.loads.Store(0)
	for range 10 {
		grant(t, g, app).Done(succeeded)
	}
	assert.Zero(t, store.loads.Load(), "a call that spends the application's token checks the record by writing it")
}

// A call longer than StateTTL to a destination that caps its calls gives
// its lease back without reading the record first: the write that
// removes the lease is checked by its compare-and-set, as the one that
// took it was (a busy worker's calls last longer than StateTTL, and the
// read was a round trip per job).
func TestALongCallGivesItsLeaseBackInOneWrite(t *testing.T) {
	store := &countingStates{DestinationStates: memory.NewDestinationStates()}
	c := testkit.NewManualClockAt(start)
	g := destinations.NewGate(destinations.Config{Systems: map[string]destinations.Quota{"shop": {Concurrency: 2}}}, c, store)
	grant(t, g, shop).Done(succeeded)

	store.loads.Store(0)
	store.swaps.Store(0)
	permit := grant(t, g, shop)
	c.Advance(2 * destinations.DefaultStateTTL)
	permit.Done(succeeded)
	assert.Zero(t, store.loads.Load(), "no read")
	assert.Equal(t, int64(2), store.swaps.Load(), "a write to take the lease, one to give it back")
	assert.Zero(t, state(t, g, shop).InFlight)

	// Another worker's write meanwhile: the lease's write loses, reads
	// what won, and gives the lease back from it.
	other := destinations.NewGate(destinations.Config{Systems: map[string]destinations.Quota{"shop": {Concurrency: 2}}}, c, store)
	permit = grant(t, g, shop)
	c.Advance(2 * destinations.DefaultStateTTL)
	grant(t, other, shop).Done(succeeded)
	permit.Done(succeeded)
	permit = grant(t, g, shop)
	grant(t, g, shop).Done(succeeded)
	permit.Done(succeeded)
	// Every lease was given back: the other worker has the whole cap.
	first := grant(t, other, shop)
	grant(t, other, shop).Done(succeeded)
	first.Done(succeeded)
}
