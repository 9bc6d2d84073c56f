package destinations_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/testkit"
)

// keepingStates notes the keep of each key's last write.
type keepingStates struct {
	*memory.DestinationStates
	mu    sync.Mutex
	keeps map[string]time.Duration
}

func (k *keepingStates) Swap(ctx context.Context, key string, version int64, state []byte, keep time.Duration) (model.DestinationRecord, bool, error) {
	r, swapped, err := k.DestinationStates.Swap(ctx, key, version, state, keep)
	if swapped {
		k.mu.Lock()
		k.keeps[key] = keep
		k.mu.Unlock()
	}
	return r, swapped, err
}

func (k *keepingStates) keep(d model.Destination) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keeps[d.String()]
}

// A record is kept a week past its last write, so the fleet's store does
// not grow by every shop ever called, but a pause until resumed is kept
// for ever: a destination nobody calls must stay paused.
func TestARecordIsKeptAWeekUnlessPausedUntilResumed(t *testing.T) {
	store := &keepingStates{DestinationStates: memory.NewDestinationStates(), keeps: map[string]time.Duration{}}
	c := testkit.NewManualClockAt(start)
	g := destinations.NewGate(destinations.Config{Systems: map[string]destinations.Quota{"shop": {Rate: 5, Burst: 5}}}, c, store)

	grant(t, g, shop).Done(succeeded)
	assert.Equal(t, 7*24*time.Hour, store.keep(shop))

	require.NoError(t, g.Pause(ctx, otherShop, time.Time{}))
	assert.Zero(t, store.keep(otherShop), "paused until resumed: for ever")
	require.NoError(t, g.Resume(ctx, otherShop))
	assert.Equal(t, 7*24*time.Hour, store.keep(otherShop))

	require.NoError(t, g.Pause(ctx, otherShop, c.Now().Add(48*time.Hour)))
	assert.Equal(t, 9*24*time.Hour, store.keep(otherShop), "a week past the pause's end")
}
