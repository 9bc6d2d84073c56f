package destinations_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/testkit"
)

// start is the clock's first reading, on a whole second so the
// unpaced destination's per-second count is exact.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var (
	shop      = model.Destination{System: "shop", Account: "a"}
	otherShop = model.Destination{System: "shop", Account: "b"}
	provider  = model.Destination{System: "ai", Account: "p"}
)

// newGate is a gate on a fake clock with quota for the "shop" system and
// no quota for the others.
func newGate(quota destinations.Quota, breaker destinations.BreakerConfig) (*destinations.Gate, *testkit.ManualClock) {
	c := testkit.NewManualClockAt(start)
	cfg := destinations.Config{Systems: map[string]destinations.Quota{"shop": quota}, Breaker: breaker}
	return destinations.NewGate(cfg, c, memory.NewDestinationStates()), c
}

func grant(t *testing.T, g *destinations.Gate, d model.Destination) *destinations.Permit {
	t.Helper()
	permit, wait := g.Try(d)
	require.NotNil(t, permit, "no permit for %s: %+v", d, wait)
	require.Zero(t, wait)
	return permit
}

func refuse(t *testing.T, g *destinations.Gate, d model.Destination) destinations.Wait {
	t.Helper()
	permit, wait := g.Try(d)
	require.Nil(t, permit, "a permit for %s", d)
	return wait
}

// state is d's row of the gate's snapshot.
func state(t *testing.T, g *destinations.Gate, d model.Destination) destinations.State {
	t.Helper()
	for _, s := range g.Snapshot() {
		if s.Destination == d.String() {
			return s
		}
	}
	t.Fatalf("%s is not in the snapshot", d)
	return destinations.State{}
}

var (
	succeeded = destinations.Outcome{Kind: destinations.Succeeded}
	failed    = destinations.Outcome{Kind: destinations.Failed}
	abandoned = destinations.Outcome{Kind: destinations.Abandoned}
)

func throttled(retryAfter time.Duration) destinations.Outcome {
	return destinations.Outcome{Kind: destinations.Throttled, RetryAfter: retryAfter}
}

// paced is a paced wait without its interval, which the pace tests that
// are about its end leave aside.
func paced(w destinations.Wait) destinations.Wait {
	w.Every = 0
	return w
}

var ctx = context.Background()
