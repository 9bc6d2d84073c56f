package destinations_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/testsupport/testkit"
)

// newPlatformGate is newGate with "shop" a platform: its shops share one
// breaker besides their own.
func newPlatformGate() (*destinations.Gate, *testkit.ManualClock) {
	c := testkit.NewManualClockAt(start)
	cfg := destinations.Config{
		Platforms: map[string]bool{"shop": true},
		Breaker:   destinations.BreakerConfig{Failures: 5, Cooldown: 5 * time.Second, MaxCooldown: 30 * time.Second},
	}
	return destinations.NewGate(cfg, c, memory.NewDestinationStates()), c
}

func shopNamed(account string) model.Destination {
	return model.Destination{System: "shop", Account: account}
}

var platformShop = model.Destination{System: "shop"}

// failAcross fails n calls, one shop after another of accounts, each
// after the doubt's hold of the failure before it.
func failAcross(t *testing.T, g *destinations.Gate, c *testkit.ManualClock, n int, accounts ...string) {
	t.Helper()
	for i := range n {
		if i > 0 {
			c.Advance(time.Second)
		}
		grant(t, g, shopNamed(accounts[i%len(accounts)])).Done(failed)
	}
}

func TestAPlatformsBreakerOpensWhenTwoOfItsShopsFailInARow(t *testing.T) {
	g, c := newPlatformGate()
	failAcross(t, g, c, 2, "a", "b")

	wait := refuse(t, g, shopNamed("never-called"))
	assert.Equal(t, destinations.Wait{Until: c.Now().Add(5 * time.Second), Why: destinations.WhyBreakerOpen, Of: platformShop}, wait,
		"a shop that never failed waits for its platform")
	grant(t, g, provider).Done(succeeded) // not a platform: not held
	assert.Equal(t, destinations.BreakerOpen, state(t, g, platformShop).Breaker)
}

func TestOneShopFailingOpensItsOwnBreakerNotItsPlatforms(t *testing.T) {
	g, c := newPlatformGate()
	failAcross(t, g, c, 5, "a")

	assert.Equal(t, destinations.WhyBreakerOpen, refuse(t, g, shopNamed("a")).Why)
	assert.Equal(t, shopNamed("a"), refuse(t, g, shopNamed("a")).Of)
	c.Advance(time.Second)
	grant(t, g, shopNamed("b")).Done(succeeded)
	grant(t, g, shopNamed("c")).Done(succeeded)
}

func TestAnAnswerFromAnyShopEndsThePlatformsStreak(t *testing.T) {
	g, c := newPlatformGate()
	failAcross(t, g, c, 1, "a")
	c.Advance(time.Second)
	grant(t, g, shopNamed("d")).Done(throttled(0)) // a 429 is an answer too
	failAcross(t, g, c, 1, "b")

	c.Advance(time.Second)
	grant(t, g, shopNamed("e")).Done(succeeded)
	assert.Equal(t, destinations.BreakerClosed, state(t, g, platformShop).Breaker)
}

func TestAfterAFailureOneCallAtATimeGoesToThePlatform(t *testing.T) {
	g, c := newPlatformGate()
	inFlight := grant(t, g, shopNamed("z"))
	failAcross(t, g, c, 1, "a")
	c.Advance(time.Second)

	doubt := grant(t, g, shopNamed("b"))
	wait := refuse(t, g, shopNamed("c"))
	assert.Equal(t, destinations.WhyProbing, wait.Why, "one call while the platform is in doubt")
	assert.Equal(t, platformShop, wait.Of)

	inFlight.Done(succeeded) // a call from before the failure answers: no doubt left
	grant(t, g, shopNamed("c")).Done(succeeded)
	grant(t, g, shopNamed("d")).Done(succeeded)
	doubt.Done(succeeded)
	assert.Equal(t, destinations.BreakerClosed, state(t, g, platformShop).Breaker)
}

// The calls already in flight when the first failure comes back answer
// for the platform first: no call starts for a moment (doubtHold), so a
// call that fails too opens the breaker with nothing more sent into the
// outage; one that answers ends the doubt at once.
func TestAfterAFailureNoCallGoesForAMomentUnlessOneInFlightAnswers(t *testing.T) {
	g, c := newPlatformGate()
	inFlight := grant(t, g, shopNamed("z"))
	failAcross(t, g, c, 1, "a")
	assert.Equal(t, destinations.Wait{Until: start.Add(time.Second), Why: destinations.WhyProbing, Of: platformShop},
		refuse(t, g, shopNamed("b")), "the calls in flight answer first")
	inFlight.Done(failed)
	assert.Equal(t, destinations.WhyBreakerOpen, refuse(t, g, shopNamed("b")).Why, "a second shop's failure in flight opened it")

	g, c = newPlatformGate()
	inFlight = grant(t, g, shopNamed("z"))
	failAcross(t, g, c, 1, "a")
	inFlight.Done(succeeded)
	grant(t, g, shopNamed("b")).Done(succeeded)
	grant(t, g, shopNamed("c")).Done(succeeded)

	g, c = newPlatformGate()
	failAcross(t, g, c, 1, "a")
	c.Advance(time.Second)
	grant(t, g, shopNamed("b")) // nothing else answered: the doubt's one call
	assert.Equal(t, destinations.WhyProbing, refuse(t, g, shopNamed("c")).Why)
}

func TestTheDoubtsCallLostOnOurSideLetsTheNextGo(t *testing.T) {
	g, c := newPlatformGate()
	failAcross(t, g, c, 1, "a")
	c.Advance(time.Second)
	grant(t, g, shopNamed("b")).Done(abandoned)

	grant(t, g, shopNamed("c")).Done(failed)
	assert.Equal(t, destinations.WhyBreakerOpen, refuse(t, g, shopNamed("d")).Why)
}

func TestAnotherWorkerSeesAPlatformsFailureAtItsNextCall(t *testing.T) {
	c := testkit.NewManualClockAt(start)
	store := memory.NewDestinationStates()
	cfg := destinations.Config{Platforms: map[string]bool{"shop": true}}
	seen, failing := destinations.NewGate(cfg, c, store), destinations.NewGate(cfg, c, store)
	grant(t, seen, shopNamed("x")).Done(succeeded) // the platform's record cached, closed

	failAcross(t, failing, c, 1, "a")
	c.Advance(time.Second)
	doubt := grant(t, failing, shopNamed("b"))
	assert.Equal(t, destinations.WhyProbing, refuse(t, seen, shopNamed("y")).Why,
		"a worker's cache of the platform does not let a call past another's failure")
	doubt.Done(failed)
	refuse(t, seen, shopNamed("y")) // as it last read the platform: in doubt
	c.Advance(destinations.DefaultStateTTL)
	assert.Equal(t, destinations.WhyBreakerOpen, refuse(t, seen, shopNamed("y")).Why)
}

func TestAPlatformsProbeIsAnyShopsCallAndItsAnswerClosesIt(t *testing.T) {
	g, c := newPlatformGate()
	failAcross(t, g, c, 2, "a", "b")
	c.Advance(5 * time.Second)

	probe := grant(t, g, shopNamed("d"))
	assert.Equal(t, destinations.WhyProbing, refuse(t, g, shopNamed("e")).Why, "one probe at a time")
	probe.Done(failed)
	assert.Equal(t, destinations.Wait{Until: c.Now().Add(10 * time.Second), Why: destinations.WhyBreakerOpen, Of: platformShop},
		refuse(t, g, shopNamed("e")), "a failed probe doubles the cooldown")

	c.Advance(10 * time.Second)
	grant(t, g, shopNamed("e")).Done(succeeded)
	grant(t, g, shopNamed("f")).Done(succeeded)
	assert.Equal(t, destinations.BreakerClosed, state(t, g, platformShop).Breaker)
}

func TestAnOperatorClosesAPlatformsBreakerByItsName(t *testing.T) {
	g, c := newPlatformGate()
	failAcross(t, g, c, 2, "a", "b")
	require.Equal(t, destinations.BreakerOpen, state(t, g, platformShop).Breaker)

	require.NoError(t, g.CloseBreaker(ctx, platformShop))
	grant(t, g, shopNamed("d")).Done(succeeded)
}

func TestAPacedWaitSaysTheTimeBetweenCallsAtTheQuota(t *testing.T) {
	g, c := newGate(destinations.Quota{Rate: 4, Burst: 1}, destinations.BreakerConfig{})
	grant(t, g, shop).Done(succeeded)
	assert.Equal(t, 250*time.Millisecond, refuse(t, g, shop).Every)

	c.Advance(time.Second)
	grant(t, g, shop).Done(throttled(0)) // the rate halves...
	c.Advance(time.Second)
	grant(t, g, shop).Done(succeeded)
	assert.Equal(t, 250*time.Millisecond, refuse(t, g, shop).Every, "...the turns stay the quota's")
}

// newPacedPlatformGate is newPlatformGate with a quota for each of the
// platform's shops (5/s, burst 10) and none for the platform as a whole.
func newPacedPlatformGate() (*destinations.Gate, *testkit.ManualClock) {
	c := testkit.NewManualClockAt(start)
	cfg := destinations.Config{
		Systems:   map[string]destinations.Quota{"shop": {Rate: 5, Burst: 10}},
		Platforms: map[string]bool{"shop": true},
	}
	return destinations.NewGate(cfg, c, memory.NewDestinationStates()), c
}

// A platform's application bucket nobody configured starts at one
// account's quota, which the platform must allow the application as a
// whole, and grows by one call a second per success: a worker's first
// batch of calls for many shops is not sent all at once into a bucket
// nobody knows. A 429 ends the start; a start that meets none ends
// unpaced.
func TestAPlatformsApplicationBucketStartsAtOneShopsQuotaAndGrows(t *testing.T) {
	g, c := newPacedPlatformGate()
	var first []*destinations.Permit
	for i := range 10 {
		first = append(first, grant(t, g, shopNamed(fmt.Sprint("s", i))))
	}
	w := refuse(t, g, shopNamed("s10"))
	assert.Equal(t, destinations.Wait{Until: start.Add(200 * time.Millisecond), Why: destinations.WhyPaced, Of: platformShop}, paced(w),
		"the application's burst is one shop's")
	for _, p := range first {
		p.Done(succeeded)
	}
	assert.Equal(t, 15.0, state(t, g, platformShop).Rate, "one call a second more per success")

	for i := range 1000 {
		c.Advance(time.Second)
		grant(t, g, shopNamed(fmt.Sprint("t", i))).Done(succeeded)
	}
	assert.Zero(t, state(t, g, platformShop).Rate, "no 429 all the way: unpaced")
}

func TestA429EndsTheApplicationBucketsStart(t *testing.T) {
	g, c := newPacedPlatformGate()
	grant(t, g, shopNamed("a")).Done(destinations.Outcome{Kind: destinations.Throttled, RetryAfter: time.Second, Scope: platformerr.ScopeApplication})
	assert.InDelta(t, 3.5, state(t, g, platformShop).Rate, 1e-9, "0.7 of the rate that met it")
	for i := range 100 {
		c.Advance(time.Second)
		grant(t, g, shopNamed(fmt.Sprint("b", i))).Done(succeeded)
	}
	assert.Less(t, state(t, g, platformShop).Rate, 10.0, "no longer growing by a call a second per success")
}

// A platform whose limits are per account only (Shopify's are per app and
// store) is given an application quota without a rate: its shops share a
// breaker, and no bucket of the application's slows their calls, neither
// a configured one nor the slow start of one nobody configured.
func TestAPlatformWithoutAnApplicationBucketPacesOnlyItsShops(t *testing.T) {
	c := testkit.NewManualClockAt(start)
	cfg := destinations.Config{
		Systems:      map[string]destinations.Quota{"shop": {Rate: 1, Burst: 1}},
		Platforms:    map[string]bool{"shop": true},
		Applications: map[string]destinations.Quota{"shop": {}},
	}
	g := destinations.NewGate(cfg, c, memory.NewDestinationStates())
	for i := range 50 { // fifty shops' first calls, at once: each its own bucket's token
		grant(t, g, shopNamed(fmt.Sprint(i))).Done(succeeded)
	}
	assert.Equal(t, destinations.WhyPaced, refuse(t, g, shopNamed("0")).Why, "each shop keeps its own pace")
	assert.Equal(t, shopNamed("0"), refuse(t, g, shopNamed("0")).Of)

	failAcross(t, g, c, 2, "x1", "x2")
	assert.Equal(t, destinations.WhyBreakerOpen, refuse(t, g, shopNamed("new")).Why, "and one breaker")
}

// The defaults: Shopify's limits are per app and store, with no bucket
// of the application across stores; TikTok's are per app.
func TestTheDefaultsGiveShopifyNoApplicationBucket(t *testing.T) {
	cfg := destinations.DefaultConfig()
	q, ok := cfg.Applications["shopify"]
	require.True(t, ok)
	assert.Zero(t, q.Rate)
}
