package destinations_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/destinations"
)

func TestTheBucketGrantsItsBurstThenItsRate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		quota     destinations.Quota
		wantBurst int
		interval  time.Duration
	}{
		{"a burst as configured", destinations.Quota{Rate: 2, Burst: 5}, 5, 500 * time.Millisecond},
		{"no burst: a second's worth", destinations.Quota{Rate: 4}, 4, 250 * time.Millisecond},
		{"a slow rate: one at a time", destinations.Quota{Rate: 0.5}, 1, 2 * time.Second},
		{"a rate that does not divide a second", destinations.Quota{Rate: 3, Burst: 1}, 1, 333_333_334},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, c := newGate(tc.quota, destinations.BreakerConfig{})
			for range tc.wantBurst {
				grant(t, g, shop).Done(succeeded)
			}
			assert.Equal(t, destinations.Wait{Until: start.Add(tc.interval), Why: destinations.WhyPaced, Of: shop}, paced(refuse(t, g, shop)))

			c.Advance(tc.interval - time.Millisecond)
			refuse(t, g, shop)
			c.Advance(time.Millisecond)
			grant(t, g, shop).Done(succeeded)
			assert.Equal(t, c.Now().Add(tc.interval), refuse(t, g, shop).Until)

			grant(t, g, otherShop) // each account has a bucket of its own
		})
	}
}

func TestA429BlocksUntilItsRetryAfterAndHalvesTheRate(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 4, Burst: 4}, destinations.BreakerConfig{})
	first, second := grant(t, g, shop), grant(t, g, shop)

	first.Done(throttled(3 * time.Second))
	assert.Equal(t, destinations.Wait{Until: start.Add(3 * time.Second), Why: destinations.WhyPaced, Of: shop}, paced(refuse(t, g, shop)))
	assert.Equal(t, 2.0, state(t, g, shop).Rate)
	assert.Equal(t, start.Add(3*time.Second), state(t, g, shop).ThrottledUntil)
	grant(t, g, otherShop)

	// A call sent before the slow-down went at the old pace: its 429 does
	// not halve the rate again.
	second.Done(throttled(time.Second))
	assert.Equal(t, 2.0, state(t, g, shop).Rate)
	assert.Equal(t, start.Add(3*time.Second), refuse(t, g, shop).Until, "a shorter Retry-After does not shorten the wait")

	c.Advance(3 * time.Second)
	third := grant(t, g, shop)
	third.Done(throttled(0))
	assert.Equal(t, 1.0, state(t, g, shop).Rate)
	assert.Equal(t, c.Now().Add(time.Second), refuse(t, g, shop).Until, "no Retry-After: one call's worth of the new rate")
	assert.Equal(t, uint64(3), state(t, g, shop).Throttles)
}

func TestTheRateNeverLearnsBelowItsFloor(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 1}, destinations.BreakerConfig{})
	for range 10 {
		grant(t, g, shop).Done(throttled(0))
		c.Advance(time.Minute)
	}
	assert.Equal(t, 0.1, state(t, g, shop).Rate)
}

func TestSuccessesRaiseTheRateBackToTheQuotaAndNotBeyond(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 10, Burst: 2}, destinations.BreakerConfig{})
	inFlight := grant(t, g, shop)
	grant(t, g, shop).Done(throttled(time.Second))
	require.Equal(t, 5.0, state(t, g, shop).Rate)

	// Its success went at the old pace: it teaches nothing.
	inFlight.Done(succeeded)
	assert.Equal(t, 5.0, state(t, g, shop).Rate)

	var rates []float64
	for range 12 {
		c.Advance(time.Second)
		grant(t, g, shop).Done(succeeded)
		rates = append(rates, state(t, g, shop).Rate)
	}
	assert.InDeltaSlice(t, []float64{5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 9.5, 10, 10, 10}, rates, 1e-9)
}

func TestAnUnpacedDestinationLearnsFromWhatItGotAtItsFirst429(t *testing.T) {
	g, c := newGate(destinations.Quota{}, destinations.BreakerConfig{})
	// 10 calls a second for 4 seconds: no pace, so no refusal.
	var last *destinations.Permit
	for i := range 40 {
		if i > 0 {
			c.Advance(100 * time.Millisecond)
		}
		last = grant(t, g, provider)
		if i < 39 {
			last.Done(succeeded)
		}
	}
	require.Equal(t, 0.0, state(t, g, provider).Rate)

	last.Done(throttled(time.Second))
	got := 40 / 3.9
	assert.InDelta(t, 0.8*got, state(t, g, provider).Rate, 1e-9)

	// Back up by a twentieth of what it got per success, until it is
	// unpaced again.
	for range 3 {
		c.Advance(time.Second)
		grant(t, g, provider).Done(succeeded)
	}
	assert.InDelta(t, 0.95*got, state(t, g, provider).Rate, 1e-9)
	c.Advance(time.Second)
	grant(t, g, provider).Done(succeeded)
	assert.Equal(t, 0.0, state(t, g, provider).Rate)
	for range 100 {
		grant(t, g, provider).Done(succeeded)
	}
}

func TestAnUnpacedDestinationStartsAtOneCallASecondAtLeast(t *testing.T) {
	g, _ := newGate(destinations.Quota{}, destinations.BreakerConfig{})
	grant(t, g, provider).Done(throttled(0))
	assert.Equal(t, 1.0, state(t, g, provider).Rate)
	assert.Equal(t, start.Add(time.Second), refuse(t, g, provider).Until)
}

func TestAQuotaHeaderNearlySpentStopsTheBurst(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 2, Burst: 40}, destinations.BreakerConfig{})
	report := func(used int) destinations.Outcome {
		return destinations.Outcome{Kind: destinations.Succeeded, QuotaUsed: used, QuotaLimit: 40}
	}
	grant(t, g, shop).Done(report(31))
	grant(t, g, shop).Done(report(32))
	assert.Equal(t, destinations.Wait{Until: start.Add(500 * time.Millisecond), Why: destinations.WhyPaced, Of: shop}, paced(refuse(t, g, shop)))

	// The rate itself is kept: a call every half second, as the bucket leaks.
	c.Advance(500 * time.Millisecond)
	grant(t, g, shop).Done(report(32))
	assert.Equal(t, c.Now().Add(500*time.Millisecond), refuse(t, g, shop).Until)
	assert.Equal(t, 2.0, state(t, g, shop).Rate)
}
