package destinations_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
)

// A capped destination called again once its record is older than
// StateTTL is not read first: the call's lease is written at the version
// the gate knows, which checks it (a shop's jobs a few seconds apart cost
// one round trip each, not two).
func TestACappedCallAfterStateTTLWritesWithoutReading(t *testing.T) {
	store := &countingStates{DestinationStates: memory.NewDestinationStates()}
	gates, c := fleet(1, 8, store)
	grant(t, gates[0], shop).Done(succeeded)
	store.loads.Store(0)
	store.swaps.Store(0)
	for range 3 {
		c.Advance(2 * destinations.DefaultStateTTL)
		grant(t, gates[0], shop).Done(succeeded)
	}
	assert.Zero(t, store.loads.Load(), "a record the lease's write checks is not read first")
	assert.Equal(t, int64(6), store.swaps.Load())
}

// What another worker wrote since the gate last read the record is
// obeyed all the same: the write at the old version fails, and the gate
// decides again from the record as it is.
func TestACappedCallAfterStateTTLObeysWhatAnotherWorkerWrote(t *testing.T) {
	gates, c := fleet(2, 8, memory.NewDestinationStates())
	grant(t, gates[0], shop).Done(succeeded)
	c.Advance(2 * destinations.DefaultStateTTL)
	assert.NoError(t, gates[1].Pause(ctx, shop, c.Now().Add(time.Minute)))
	w := refuse(t, gates[0], shop)
	assert.Equal(t, destinations.WhyPaused, w.Why)

	// A refusal decided from a record read long ago is read again before
	// it is answered: the pause is over for the fleet.
	assert.NoError(t, gates[1].Resume(ctx, shop))
	c.Advance(2 * destinations.DefaultStateTTL)
	grant(t, gates[0], shop).Done(succeeded)
}
