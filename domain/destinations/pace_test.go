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

func TestA429BlocksUntilItsRetryAfterAndBacksOffTheRate(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 4, Burst: 4}, destinations.BreakerConfig{})
	first, second := grant(t, g, shop), grant(t, g, shop)

	first.Done(throttled(3 * time.Second))
	assert.Equal(t, destinations.Wait{Until: start.Add(3 * time.Second), Why: destinations.WhyPaced, Of: shop}, paced(refuse(t, g, shop)))
	assert.InDelta(t, 0.7*4, state(t, g, shop).Rate, 1e-9, "0.7 of the rate that met the 429")
	assert.Equal(t, start.Add(3*time.Second), state(t, g, shop).ThrottledUntil)
	grant(t, g, otherShop)

	// A call sent before the slow-down went at the old pace: its 429 does
	// not slow the pace down again.
	second.Done(throttled(time.Second))
	assert.InDelta(t, 2.8, state(t, g, shop).Rate, 1e-9)
	assert.Equal(t, start.Add(3*time.Second), refuse(t, g, shop).Until, "a shorter Retry-After does not shorten the wait")

	// Answered 429 again at once after the wait: the destination took one
	// call in 3 s (its bucket was full at both 429s), and that is the
	// rate the pace learns, not 0.7 of its own.
	c.Advance(3 * time.Second)
	third := grant(t, g, shop)
	third.Done(throttled(0))
	assert.InDelta(t, 0.7/3, state(t, g, shop).Rate, 1e-9)
	assert.WithinDuration(t, c.Now().Add(secondsOf(3/0.7)), refuse(t, g, shop).Until, time.Microsecond, "no Retry-After: one call's worth of the new rate")
	assert.Equal(t, uint64(3), state(t, g, shop).Throttles)
}

// A pace whose calls a Retry-After kept waiting sends less than its rate
// says: the 429s come seldom, and a rate learnt from the pace's own
// (0.7 of it each time) would stay far above the destination's for long.
// What the destination served between two 429s is its rate.
func TestA429LearnsWhatTheDestinationServedSinceTheLast(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 20, Burst: 1}, destinations.BreakerConfig{})
	grant(t, g, shop).Done(throttled(time.Second))
	require.InDelta(t, 14.0, state(t, g, shop).Rate, 1e-9)

	// 8 calls in the 2 s since, the last one answered 429.
	c.Advance(time.Second)
	for range 7 {
		grant(t, g, shop).Done(succeeded)
		c.Advance(100 * time.Millisecond)
	}
	c.Advance(300 * time.Millisecond)
	grant(t, g, shop).Done(throttled(time.Second))
	assert.InDelta(t, 0.7*8/2, state(t, g, shop).Rate, 1e-9)
}

func TestTheRateNeverLearnsBelowItsFloor(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 1}, destinations.BreakerConfig{})
	for range 10 {
		grant(t, g, shop).Done(throttled(0))
		c.Advance(time.Minute)
	}
	assert.Equal(t, 0.1, state(t, g, shop).Rate)
}

func TestSuccessesRaiseTheRateBackToWhatMetThe429AndNotBeyondTheQuota(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 10, Burst: 2}, destinations.BreakerConfig{})
	inFlight := grant(t, g, shop)
	grant(t, g, shop).Done(throttled(time.Second))
	require.InDelta(t, 7.0, state(t, g, shop).Rate, 1e-9)

	// Its success went at the old pace: it teaches nothing.
	inFlight.Done(succeeded)
	assert.InDelta(t, 7.0, state(t, g, shop).Rate, 1e-9)

	// Quickly at first, ever more slowly near the rate that met the 429
	// (here the quota), and no further.
	rates := []float64{7}
	for range 20 {
		c.Advance(time.Second)
		grant(t, g, shop).Done(succeeded)
		rates = append(rates, state(t, g, shop).Rate)
	}
	for i := 1; i < len(rates); i++ {
		assert.GreaterOrEqual(t, rates[i], rates[i-1], "the rate only climbs")
		assert.LessOrEqual(t, rates[i], 10.0, "never beyond the quota")
		if i >= 2 && rates[i-1] < 10 {
			assert.LessOrEqual(t, rates[i]-rates[i-1], rates[i-1]-rates[i-2]+1e-9, "the climb slows")
		}
	}
	assert.InDelta(t, 7.6, rates[1], 1e-9, "a fifth of the way back")
	assert.Equal(t, 10.0, rates[len(rates)-1], "back at the quota")
}

// A destination without a configured rate learns from what it got at its
// first 429, climbs back to the rate that met its last 429 and holds
// there; only after many calls without a 429 does it probe beyond, slowly.
// It is never unpaced again: an unlimited pace would meet the same 429s
// in a flood.
func TestALearntPaceHoldsAtTheRateThatMetTheLast429AndProbesOnlyLater(t *testing.T) {
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
	assert.InDelta(t, 0.7*got, state(t, g, provider).Rate, 1e-9)

	call := func() {
		t.Helper()
		c.Advance(time.Second)
		grant(t, g, provider).Done(succeeded)
	}
	for range 19 {
		call()
	}
	assert.InDelta(t, got, state(t, g, provider).Rate, 1e-9, "back at the rate that met the 429, after its 20 calls since")
	call()
	assert.InDelta(t, got, state(t, g, provider).Rate, 1e-9, "and held there")
	call()
	assert.InDelta(t, 1.005*got, state(t, g, provider).Rate, 1e-9, "then probing beyond, by a 200th of it per call")
	for range 1000 {
		call()
	}
	assert.NotZero(t, state(t, g, provider).Rate, "paced still")
}

func TestAnUnpacedDestinationLearnsFromOneCallASecondAtLeast(t *testing.T) {
	g, _ := newGate(destinations.Quota{}, destinations.BreakerConfig{})
	grant(t, g, provider).Done(throttled(0))
	assert.InDelta(t, 0.7, state(t, g, provider).Rate, 1e-9)
	assert.WithinDuration(t, start.Add(secondsOf(1/0.7)), refuse(t, g, provider).Until, time.Microsecond)
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

// secondsOf is s seconds as a Duration.
func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
