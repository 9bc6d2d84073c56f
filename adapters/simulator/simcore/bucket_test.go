package simcore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simcore"
)

// Shopify's bucket: 40 calls fit at once, the 41st waits for one unit to
// leak out (half a second at 2/s), and the level falls with time.
func TestBucketAdmitsItsCapacityThenWaitsForTheLeak(t *testing.T) {
	b := simcore.NewBucket(simcore.BucketSize{Capacity: 40, LeakPerSecond: 2})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 40 {
		require.Zero(t, b.Wait(now), "call %d fits", i+1)
		b.Pour(now)
	}
	assert.Equal(t, 40, b.Used(now))
	assert.Equal(t, 500*time.Millisecond, b.Wait(now), "the 41st waits for one unit to leak")

	now = now.Add(500 * time.Millisecond)
	assert.Zero(t, b.Wait(now))
	assert.Equal(t, 39, b.Used(now))
	now = now.Add(time.Minute)
	assert.Zero(t, b.Used(now), "an idle bucket drains, never below empty")
	assert.Equal(t, 40, b.Capacity())
}

func TestBucketSizeRefusesWhatNeverAdmitsOrDrains(t *testing.T) {
	require.NoError(t, simcore.BucketSize{Capacity: 1, LeakPerSecond: 0.5}.Validate())
	for _, s := range []simcore.BucketSize{{Capacity: 0, LeakPerSecond: 1}, {Capacity: 4}, {Capacity: 4, LeakPerSecond: -1}} {
		assert.Error(t, s.Validate(), "%+v", s)
	}
}
