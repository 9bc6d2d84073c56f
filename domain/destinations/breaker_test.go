package destinations_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/destinations"
)

var testBreaker = destinations.BreakerConfig{Failures: 3, Cooldown: 5 * time.Second, MaxCooldown: 12 * time.Second}

// open fails testBreaker.Failures calls to d in a row.
func open(t *testing.T, g *destinations.Gate) {
	t.Helper()
	for range testBreaker.Failures {
		grant(t, g, shop).Done(failed)
	}
}

func TestConsecutiveFailuresOpenTheBreakerForItsCooldown(t *testing.T) {
	g, c := newGate(destinations.Quota{}, testBreaker)
	grant(t, g, shop).Done(failed)
	grant(t, g, shop).Done(failed)
	grant(t, g, shop).Done(succeeded)
	grant(t, g, shop).Done(failed)
	grant(t, g, shop).Done(failed)
	require.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker, "an answer breaks the run of failures")

	inFlight := grant(t, g, shop)
	grant(t, g, shop).Done(failed)
	assert.Equal(t, destinations.Wait{Until: start.Add(5 * time.Second), Why: destinations.WhyBreakerOpen, Of: shop}, refuse(t, g, shop))
	assert.Equal(t, destinations.BreakerOpen, state(t, g, shop).Breaker)
	assert.Equal(t, start.Add(5*time.Second), state(t, g, shop).OpenUntil)
	grant(t, g, otherShop).Done(succeeded)

	// While open, only the probe speaks for the destination.
	inFlight.Done(succeeded)
	c.Advance(4 * time.Second)
	assert.Equal(t, start.Add(5*time.Second), refuse(t, g, shop).Until)
}

func TestAfterItsCooldownTheBreakerLetsOneProbeGo(t *testing.T) {
	g, c := newGate(destinations.Quota{}, testBreaker)
	open(t, g)
	c.Advance(5 * time.Second)
	require.Equal(t, destinations.BreakerHalfOpen, state(t, g, shop).Breaker)

	probe := grant(t, g, shop)
	assert.Equal(t, destinations.Wait{Until: c.Now().Add(time.Second), Why: destinations.WhyProbing, Of: shop}, refuse(t, g, shop))
	probe.Done(succeeded)

	assert.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker)
	grant(t, g, shop)
	grant(t, g, shop)
	// Closed afresh: its failures and cooldown are forgotten.
	grant(t, g, shop).Done(failed)
	grant(t, g, shop).Done(failed)
	require.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker)
	grant(t, g, shop).Done(failed)
	assert.Equal(t, c.Now().Add(5*time.Second), refuse(t, g, shop).Until)
}

func TestAFailedProbeDoublesTheCooldownUpToItsMax(t *testing.T) {
	g, c := newGate(destinations.Quota{}, testBreaker)
	open(t, g)
	c.Advance(5 * time.Second)
	var cooldowns []time.Duration
	for range 3 {
		grant(t, g, shop).Done(failed)
		wait := refuse(t, g, shop)
		require.Equal(t, destinations.WhyBreakerOpen, wait.Why)
		cooldowns = append(cooldowns, wait.Until.Sub(c.Now()))
		c.Advance(wait.Until.Sub(c.Now()))
	}
	assert.Equal(t, []time.Duration{10 * time.Second, 12 * time.Second, 12 * time.Second}, cooldowns)
}

func TestAThrottledProbeClosesTheBreaker(t *testing.T) {
	g, c := newGate(destinations.Quota{}, testBreaker)
	open(t, g)
	c.Advance(5 * time.Second)
	grant(t, g, shop).Done(throttled(time.Second))
	assert.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker)
}

func TestAnAbandonedProbeLetsAnotherGo(t *testing.T) {
	g, c := newGate(destinations.Quota{}, testBreaker)
	open(t, g)
	c.Advance(5 * time.Second)
	grant(t, g, shop).Done(abandoned)
	assert.Equal(t, destinations.BreakerHalfOpen, state(t, g, shop).Breaker)
	grant(t, g, shop).Done(succeeded)
	assert.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker)
}

func TestThrottledAndAbandonedCallsDoNotOpenTheBreaker(t *testing.T) {
	g, c := newGate(destinations.Quota{}, testBreaker)
	for range 10 {
		grant(t, g, shop).Done(throttled(time.Second))
		c.Advance(time.Minute)
		grant(t, g, shop).Done(abandoned)
		c.Advance(time.Minute)
	}
	assert.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker)
	assert.Zero(t, state(t, g, shop).Failures)
}

func TestCloseBreakerClosesItByHand(t *testing.T) {
	g, c := newGate(destinations.Quota{}, testBreaker)
	open(t, g)
	c.Advance(5 * time.Second)
	probe := grant(t, g, shop)

	require.NoError(t, g.CloseBreaker(ctx, shop))
	assert.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker)
	assert.Zero(t, state(t, g, shop).OpenUntil)
	grant(t, g, shop)

	// The probe from before is no probe any more: its failure counts as one.
	probe.Done(failed)
	assert.Equal(t, destinations.BreakerClosed, state(t, g, shop).Breaker)
	grant(t, g, shop).Done(failed)
	grant(t, g, shop).Done(failed)
	assert.Equal(t, c.Now().Add(5*time.Second), refuse(t, g, shop).Until, "the cooldown starts again from its first")

	require.NoError(t, g.CloseBreaker(ctx, provider)) // unknown: nothing to close
}
