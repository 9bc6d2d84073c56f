package contract

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	dest "github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// fleetStart is the fleet tests' first clock reading.
var fleetStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fleetConfig is the shape of every Gate of the fleet tests: shop paced
// at 5 calls a second with bursts of 10, each shop's breaker its own; app
// a platform (its shops share a breaker) whose application is paced at 5
// calls a second with bursts of 10, its shops unpaced; "ai" unpaced; a
// breaker that opens at the second failure.
func fleetConfig(shop, app string) dest.Config {
	return dest.Config{
		Systems: map[string]dest.Quota{
			shop: {Rate: 5, Burst: 10},
			"ai": {},
		},
		Platforms:    map[string]bool{app: true},
		Applications: map[string]dest.Quota{app: {Rate: 5, Burst: 10}},
		Breaker:      dest.BreakerConfig{Failures: 2, Cooldown: 5 * time.Second, MaxCooldown: 30 * time.Second},
	}
}

// DestinationStates is the contract of ports.DestinationStates, and of the
// Gates of a fleet of workers sharing one: a swap is a compare-and-set of
// which exactly one of several racers wins, and over it every Gate sees
// the same breaker (one half-open probe for all of them per cooldown), the
// same bucket and the same pause. Every test uses destinations of its own
// (fresh random accounts), so store may be shared by other tests.
func DestinationStates(t *testing.T, store ports.DestinationStates) {
	ctx := context.Background()
	key := func() string { return "contract/" + uuid.NewString() }
	// shops and app are platforms of the test's own, whose records no
	// other test shares: a platform's breaker counts its shops' failures
	// together.
	var shops, app string
	shop := func() model.Destination { return model.Destination{System: shops, Account: uuid.NewString()} }
	fleet := func(n int) ([]*dest.Gate, *testkit.ManualClock) {
		clock := testkit.NewManualClockAt(fleetStart)
		shops, app = "shop-"+uuid.NewString()[:8], "app-"+uuid.NewString()[:8]
		gates := make([]*dest.Gate, n)
		for i := range gates {
			gates[i] = dest.NewGate(fleetConfig(shops, app), clock, store)
		}
		return gates, clock
	}
	grant := func(t *testing.T, g *dest.Gate, d model.Destination) *dest.Permit {
		t.Helper()
		permit, wait := g.Try(d)
		require.NotNil(t, permit, "no permit for %s: %+v", d, wait)
		return permit
	}
	refuse := func(t *testing.T, g *dest.Gate, d model.Destination) dest.Wait {
		t.Helper()
		permit, wait := g.Try(d)
		require.Nil(t, permit, "a permit for %s", d)
		return wait
	}

	t.Run("a record nobody wrote", func(t *testing.T) {
		r, err := store.Load(ctx, key())
		require.NoError(t, err)
		assert.Zero(t, r.Version)
		assert.Empty(t, r.State)
	})

	t.Run("a swap from the version read wins, one from an older version is told what is", func(t *testing.T) {
		k := key()
		r, swapped, err := store.Swap(ctx, k, 0, []byte(`{"n":1}`), 0)
		require.NoError(t, err)
		require.True(t, swapped)
		assert.Equal(t, int64(1), r.Version)
		assert.JSONEq(t, `{"n":1}`, string(r.State))

		r, swapped, err = store.Swap(ctx, k, 0, []byte(`{"n":2}`), 0)
		require.NoError(t, err)
		assert.False(t, swapped, "version 0 is gone")
		assert.Equal(t, int64(1), r.Version, "the record as it is")
		assert.JSONEq(t, `{"n":1}`, string(r.State))

		r, swapped, err = store.Swap(ctx, k, 1, []byte(`{"n":3}`), 0)
		require.NoError(t, err)
		require.True(t, swapped)
		assert.Equal(t, int64(2), r.Version)

		r, err = store.Load(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, int64(2), r.Version)
		assert.JSONEq(t, `{"n":3}`, string(r.State))
	})

	t.Run("a record is forgotten once its keep runs out, one kept for ever is not", func(t *testing.T) {
		forever, madeForever, long := key(), key(), key()
		write := func(k string, version int64, keep time.Duration) bool {
			_, swapped, err := store.Swap(ctx, k, version, []byte(`{"n":1}`), keep)
			require.NoError(t, err)
			return swapped
		}
		require.True(t, write(forever, 0, 0))
		require.True(t, write(long, 0, time.Hour))
		// A keep rewritten as 0 is for ever. If the machine is so slow
		// that the first keep ran out before the second write, the
		// second finds nothing at version 1: again, with a longer keep.
		keep := 50 * time.Millisecond
		for madeForever = key(); ; madeForever, keep = key(), 2*keep {
			require.True(t, write(madeForever, 0, keep))
			if write(madeForever, 1, 0) {
				break
			}
		}
		// Written after madeForever's first keep began, with the same
		// keep: once it is forgotten, that keep is over too.
		brief := key()
		require.True(t, write(brief, 0, keep))

		// A store that does not expire records on its own sweeps them.
		sweeper, sweeps := store.(interface {
			Sweep(context.Context) (int, error)
		})
		require.Eventually(t, func() bool {
			if sweeps {
				if _, err := sweeper.Sweep(ctx); !assert.NoError(t, err) {
					return false
				}
			}
			r, err := store.Load(ctx, brief)
			return assert.NoError(t, err) && r.Version == 0
		}, time.Minute, 10*time.Millisecond, "the record whose keep ran out is forgotten")

		for k, version := range map[string]int64{forever: 1, madeForever: 2, long: 1} {
			r, err := store.Load(ctx, k)
			require.NoError(t, err)
			assert.Equal(t, version, r.Version, "kept: %s", k)
		}
		r, swapped, err := store.Swap(ctx, brief, 0, []byte(`{"n":3}`), 0)
		require.NoError(t, err)
		assert.True(t, swapped, "a forgotten record is written again from version 0")
		assert.Equal(t, int64(1), r.Version)
	})

	t.Run("of racing swaps from one version exactly one wins", func(t *testing.T) {
		k := key()
		const racers = 16
		for _, from := range []int64{0, 1} {
			if from == 1 {
				k = key()
				_, swapped, err := store.Swap(ctx, k, 0, []byte(`{"n":0}`), 0)
				require.NoError(t, err)
				require.True(t, swapped)
			}
			var (
				wg      sync.WaitGroup
				start   = make(chan struct{})
				mu      sync.Mutex
				winners []int
			)
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, swapped, err := store.Swap(ctx, k, from, fmt.Appendf(nil, `{"n":%d}`, i+10), 0)
					assert.NoError(t, err)
					if swapped {
						mu.Lock()
						winners = append(winners, i+10)
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			require.Len(t, winners, 1, "from version %d", from)
			r, err := store.Load(ctx, k)
			require.NoError(t, err)
			assert.Equal(t, from+1, r.Version)
			assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, winners[0]), string(r.State))
		}
	})

	t.Run("a breaker opened by one worker holds every worker", func(t *testing.T) {
		gates, _ := fleet(2)
		d := shop()
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Failed})
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Failed})
		assert.Equal(t, dest.WhyBreakerOpen, refuse(t, gates[1], d).Why, "the other worker sends no call to a destination that is down")
	})

	t.Run("a marketplace's failure holds every worker's calls to its other shops", func(t *testing.T) {
		gates, clock := fleet(2)
		shopOf := func(account string) model.Destination { return model.Destination{System: app, Account: account} }
		grant(t, gates[1], shopOf("x")).Done(dest.Outcome{Kind: dest.Succeeded}) // its record cached
		grant(t, gates[0], shopOf("a")).Done(dest.Outcome{Kind: dest.Failed})
		assert.Equal(t, dest.WhyProbing, refuse(t, gates[1], shopOf("y")).Why, "in doubt: the other worker holds its call")
		clock.Advance(time.Second)
		grant(t, gates[0], shopOf("b")).Done(dest.Outcome{Kind: dest.Failed})
		w := refuse(t, gates[1], shopOf("y"))
		assert.Equal(t, dest.WhyBreakerOpen, w.Why, "two shops failed: the marketplace is down for every worker")
		assert.Equal(t, model.Destination{System: app}, w.Of)
	})

	t.Run("one half-open probe per cooldown for the whole fleet", func(t *testing.T) {
		const workers = 8
		gates, clock := fleet(workers)
		d := shop()
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Failed})
		grant(t, gates[1], d).Done(dest.Outcome{Kind: dest.Failed})
		clock.Advance(5 * time.Second)

		probes := race(gates, d)
		require.Len(t, probes, 1, "workers racing for the probe: exactly one gets it")
		for _, g := range gates {
			assert.Equal(t, dest.WhyProbing, refuse(t, g, d).Why)
		}
		probes[0].Done(dest.Outcome{Kind: dest.Failed})
		clock.Advance(dest.DefaultStateTTL) // the others' reads of a moment ago grow stale
		for _, g := range gates {
			assert.Equal(t, dest.WhyBreakerOpen, refuse(t, g, d).Why, "the failed probe opened it again, for everyone")
		}
		clock.Advance(10*time.Second - dest.DefaultStateTTL) // the doubled cooldown
		probes = race(gates, d)
		require.Len(t, probes, 1, "one probe in the next cooldown too")
		probes[0].Done(dest.Outcome{Kind: dest.Succeeded})
		clock.Advance(dest.DefaultStateTTL)
		for _, g := range gates {
			grant(t, g, d).Done(dest.Outcome{Kind: dest.Succeeded})
		}
	})

	t.Run("a killed worker's probe lease runs out", func(t *testing.T) {
		gates, clock := fleet(2)
		d := shop()
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Failed})
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Failed})
		clock.Advance(5 * time.Second)
		grant(t, gates[0], d) // the probe; its worker dies with it
		assert.Equal(t, dest.WhyProbing, refuse(t, gates[1], d).Why)
		clock.Advance(dest.DefaultProbeLease)
		grant(t, gates[1], d).Done(dest.Outcome{Kind: dest.Succeeded})
		grant(t, gates[1], d)
	})

	t.Run("two workers spend one bucket", func(t *testing.T) {
		gates, clock := fleet(2)
		d := shop()
		granted := 0
		for step := range 100 { // a second, in steps of 10 ms, the two workers taking turns
			if permit, _ := gates[step%2].Try(d); permit != nil {
				granted++
				permit.Done(dest.Outcome{Kind: dest.Succeeded})
			}
			if permit, _ := gates[(step+1)%2].Try(d); permit != nil {
				granted++
				permit.Done(dest.Outcome{Kind: dest.Succeeded})
			}
			clock.Advance(10 * time.Millisecond)
		}
		assert.LessOrEqual(t, granted, 5+10, "over a second, the fleet gets the rate and the burst, not each worker")
		assert.GreaterOrEqual(t, granted, 14, "and the bucket is served")
	})

	t.Run("a 429 to one worker slows the others", func(t *testing.T) {
		gates, _ := fleet(2)
		d := shop()
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Throttled, RetryAfter: 3 * time.Second})
		w := refuse(t, gates[1], d)
		assert.Equal(t, dest.WhyPaced, w.Why)
		assert.Equal(t, fleetStart.Add(3*time.Second), w.Until, "its Retry-After holds the fleet")
	})

	t.Run("an application's 429 to one shop paces every shop of the platform, on every worker", func(t *testing.T) {
		gates, clock := fleet(2)
		a, b := model.Destination{System: app, Account: "a"}, model.Destination{System: app, Account: "b"}
		grant(t, gates[0], a).Done(dest.Outcome{Kind: dest.Throttled, RetryAfter: 2 * time.Second, Scope: platformerr.ScopeApplication})
		w := refuse(t, gates[1], b)
		assert.Equal(t, dest.WhyPaced, w.Why)
		assert.Equal(t, fleetStart.Add(2*time.Second), w.Until, "the platform's Retry-After holds its other shops")
		assert.Equal(t, model.Destination{System: app}, w.Of, "the platform's bucket refused")
		clock.Advance(2 * time.Second)
		grant(t, gates[1], b).Done(dest.Outcome{Kind: dest.Succeeded})
		assert.Equal(t, dest.WhyPaced, refuse(t, gates[0], a).Why, "and then at the rate learnt, not at once again")
	})

	t.Run("every shop of a platform spends its application's one bucket, on every worker", func(t *testing.T) {
		gates, clock := fleet(2)
		granted := 0
		for range 100 { // a second, in steps of 10 ms, a new shop each time
			for _, g := range gates {
				if permit, _ := g.Try(model.Destination{System: app, Account: uuid.NewString()}); permit != nil {
					granted++
					permit.Done(dest.Outcome{Kind: dest.Succeeded})
				}
			}
			clock.Advance(10 * time.Millisecond)
		}
		assert.LessOrEqual(t, granted, 5+10, "over a second, the application's rate and burst for all its shops")
		assert.GreaterOrEqual(t, granted, 14, "and the bucket is served")
	})

	t.Run("a pause written by one worker is obeyed by all, a resume too", func(t *testing.T) {
		gates, clock := fleet(2)
		paced, unpaced := shop(), model.Destination{System: "ai", Account: uuid.NewString()}
		grant(t, gates[1], paced).Done(dest.Outcome{Kind: dest.Succeeded})
		grant(t, gates[1], unpaced).Done(dest.Outcome{Kind: dest.Succeeded})
		require.NoError(t, gates[0].Pause(ctx, paced, time.Time{}))
		require.NoError(t, gates[0].Pause(ctx, unpaced, fleetStart.Add(time.Hour)))

		assert.Equal(t, dest.WhyPaused, refuse(t, gates[1], paced).Why, "a paced call writes its token, so it meets the pause at once")
		clock.Advance(dest.DefaultStateTTL)
		w := refuse(t, gates[1], unpaced)
		assert.Equal(t, dest.Wait{Until: fleetStart.Add(time.Hour), Why: dest.WhyPaused, Of: unpaced}, w,
			"an unpaced one reads the state again within its staleness")

		require.NoError(t, gates[0].Resume(ctx, paced))
		require.NoError(t, gates[0].Resume(ctx, unpaced))
		clock.Advance(dest.DefaultStateTTL)
		grant(t, gates[1], paced)
		grant(t, gates[1], unpaced)
	})

	t.Run("a breaker closed by hand on one worker is closed on all", func(t *testing.T) {
		gates, clock := fleet(2)
		d := shop()
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Failed})
		grant(t, gates[0], d).Done(dest.Outcome{Kind: dest.Failed})
		assert.Equal(t, dest.WhyBreakerOpen, refuse(t, gates[1], d).Why)
		require.NoError(t, gates[0].CloseBreaker(ctx, d))
		clock.Advance(dest.DefaultStateTTL)
		grant(t, gates[1], d)
	})
}

// race has each of gates ask for a call to d at once, and returns the
// permits granted.
func race(gates []*dest.Gate, d model.Destination) []*dest.Permit {
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		mu      sync.Mutex
		permits []*dest.Permit
	)
	for _, g := range gates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if permit, _ := g.Try(d); permit != nil {
				mu.Lock()
				permits = append(permits, permit)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return permits
}
