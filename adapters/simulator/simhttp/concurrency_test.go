package simhttp_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Two calls of one ordering key held open at once are seen in flight
// together; calls made one after the other never are, and their spans
// are in the order they were sent.
func TestSimConcurrencyPerShopAndOrderingKey(t *testing.T) {
	ctx := context.Background()
	s := startSim(t, "")
	c := s.client(t, time.Minute)
	shop := simhttp.InFlightShop(model.Destination{System: "shopify", Account: "a"})
	overlapping, inTurn := simhttp.InFlightOrdering("k1"), simhttp.InFlightOrdering("k2")

	s.inject(t, simhttp.Fault{Kind: simhttp.KindListing, Action: simhttp.ActionHold, Times: 2})
	done := make(chan error, 2)
	for _, token := range []string{"h-1", "h-2"} {
		go func() {
			_, err := c.CreateListing(domain.WithOrderingKey(ctx, "k1"), listingOf(token, "shopify", "a"))
			done <- err
		}()
	}
	s.waitHeld(t, 2) // the barrier: both calls are in the simulator at once
	_, err := s.admin.Release(ctx)
	require.NoError(t, err)
	require.NoError(t, <-done)
	require.NoError(t, <-done)

	for _, token := range []string{"o-1", "o-2", "o-3"} {
		_, err := c.CreateListing(domain.WithOrderingKey(ctx, "k2"), listingOf(token, "shopify", "b"))
		require.NoError(t, err)
	}
	_, err = c.Generate(domain.WithOrderingKey(ctx, "k3"), aiText("ai-1"))
	require.NoError(t, err)

	got, err := s.admin.InFlight(ctx, inTurn, overlapping)
	require.NoError(t, err)
	assert.Len(t, got.Calls[overlapping], 2)
	assert.NotContains(t, got.Calls, shop, "calls of the keys asked for only")
	assert.Equal(t, 2, got.MaxInFlight[overlapping])
	assert.Equal(t, 2, got.MaxInFlight[shop])
	assert.Equal(t, 1, got.MaxInFlight[inTurn])
	assert.NotContains(t, got.MaxInFlight, simhttp.InFlightOrdering("k3"), "only platform calls are tracked")
	calls := got.Calls[inTurn]
	require.Len(t, calls, 3)
	for i, token := range []string{"o-1", "o-2", "o-3"} {
		assert.Equal(t, token, calls[i].Token)
		assert.Equal(t, 200, calls[i].Status)
		if i > 0 {
			assert.False(t, calls[i].Start.Before(calls[i-1].End), "%s started before %s ended", token, calls[i-1].Token)
		}
	}

	require.NoError(t, s.admin.ResetCounters(ctx))
	got, err = s.admin.InFlight(ctx, inTurn)
	require.NoError(t, err)
	assert.Empty(t, got.MaxInFlight)
	assert.Empty(t, got.Calls)
}

// The effects read-out has each platform effect once, by its shop, with
// its time; replays and throttled calls add nothing.
func TestSimPlatformEffectsPerShop(t *testing.T) {
	ctx := context.Background()
	s := startSim(t, "")
	c := s.client(t, 5*time.Second)
	for _, r := range [][3]string{{"l-1", "shopify", "a"}, {"l-2", "shopify", "a"}, {"l-1", "shopify", "a"}, {"l-3", "amazon", "z"}} {
		_, err := c.CreateListing(ctx, listingOf(r[0], r[1], r[2]))
		require.NoError(t, err)
	}
	_, err := c.Generate(ctx, aiText("ai-1"))
	require.NoError(t, err)

	got, err := s.admin.PlatformEffects(ctx)
	require.NoError(t, err)
	assert.Len(t, got.PerShop["shopify/a"], 2, "l-1 replayed adds nothing")
	assert.Len(t, got.PerShop["amazon/z"], 1)
	assert.Len(t, got.PerPlatform["shopify"], 2)
	assert.Len(t, got.PerPlatform, 2, "the AI charge is no platform effect")
	a := got.PerShop["shopify/a"]
	assert.False(t, a[1].Before(a[0]), "in order")
}

func aiText(token string) ports.AIRequest {
	return ports.AIRequest{RequestToken: token, Kind: model.AIText, Title: "Mug"}
}
