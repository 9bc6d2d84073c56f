package platformsim_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func listing(token, title string) ports.CreateListingRequest {
	return ports.CreateListingRequest{
		RequestToken: token, Platform: "shopify", ExternalShopID: "shop-1",
		Credentials: model.StoreCredentials{APIKey: "ak", APISecret: "sk_secret"},
		Title:       title, Description: "d", PriceMinor: 1999, Currency: "EUR",
	}
}

// One listing per token, however many callers race with it.
func TestCreateListingOncePerToken(t *testing.T) {
	sim := platformsim.New()
	ids := make(chan string, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			res, err := sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
			assert.NoError(t, err)
			ids <- res.ExternalListingID
		})
	}
	wg.Wait()
	close(ids)
	first := sim.Listings()[0].ID
	for id := range ids {
		assert.Equal(t, first, id)
	}
	assert.Equal(t, 1, sim.ListingCount())
	assert.Equal(t, 1, sim.Effects("pub-1"))
	assert.Equal(t, 1, sim.EffectCount())
	l := sim.Listings()[0]
	assert.Equal(t, "pub-1", l.Token)
	assert.Equal(t, "Mug", l.Title)
	assert.Equal(t, int64(1999), l.PriceMinor)

	res, err := sim.CreateListing(context.Background(), listing("pub-2", "Mug"))
	require.NoError(t, err)
	assert.NotEqual(t, first, res.ExternalListingID, "another token is another listing")
	assert.Equal(t, 2, sim.ListingCount())
	assert.Equal(t, 2, sim.EffectCount())

	for _, c := range sim.Calls() {
		assert.Equal(t, platformsim.CallCreateListing, c.Kind)
		assert.NotEmpty(t, c.ListingID)
	}
}

// A token reused for another listing is refused, naming the listing the
// token did create.
func TestCreateListingTokenReusedForAnotherListingIsAConflict(t *testing.T) {
	sim := platformsim.New()
	res, err := sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
	require.NoError(t, err)

	_, err = sim.CreateListing(context.Background(), listing("pub-1", "Cup"))
	assert.True(t, domain.IsCode(err, domain.CodeConflict), "got %v", err)
	var de *domain.Error
	require.True(t, errors.As(err, &de))
	assert.Equal(t, res.ExternalListingID, de.ResourceID)

	other := listing("pub-1", "Mug")
	other.PriceMinor = 2999
	_, err = sim.CreateListing(context.Background(), other)
	assert.True(t, domain.IsCode(err, domain.CodeConflict), "got %v", err)
	assert.NotContains(t, err.Error(), "sk_secret")
	assert.Equal(t, 1, sim.ListingCount())

	// Rotated credentials on a retry are the same request.
	rotated := listing("pub-1", "Mug")
	rotated.Credentials = model.StoreCredentials{APIKey: "ak2", APISecret: "sk2"}
	again, err := sim.CreateListing(context.Background(), rotated)
	require.NoError(t, err)
	assert.Equal(t, res.ExternalListingID, again.ExternalListingID)
	assert.Equal(t, 1, sim.ListingCount())
}

func TestCreateListingFailuresInjected(t *testing.T) {
	sim := platformsim.New()
	sim.FailNext(1, nil)
	_, err := sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "got %v", err)
	assert.Zero(t, sim.ListingCount(), "FailNext fails before the platform acts")

	sim.FailAfterEffect(1)
	_, err = sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "got %v", err)
	assert.Equal(t, 1, sim.ListingCount(), "FailAfterEffect acts, then loses the answer")

	res, err := sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
	require.NoError(t, err)
	assert.Equal(t, sim.Listings()[0].ID, res.ExternalListingID)
	assert.Equal(t, 1, sim.ListingCount())
	calls := sim.Calls()
	require.Len(t, calls, 3)
	assert.False(t, calls[0].Effect)
	assert.True(t, calls[1].Effect)
	assert.True(t, calls[2].Replayed)
}

func TestCreateListingRefusesBadRequestsWithoutEffect(t *testing.T) {
	sim := platformsim.New()
	for name, mutate := range map[string]func(*ports.CreateListingRequest){
		"no token":       func(r *ports.CreateListingRequest) { r.RequestToken = "" },
		"no title":       func(r *ports.CreateListingRequest) { r.Title = " " },
		"negative price": func(r *ports.CreateListingRequest) { r.PriceMinor = -1 },
		"bad platform":   func(r *ports.CreateListingRequest) { r.Platform = "myspace" },
		"no shop":        func(r *ports.CreateListingRequest) { r.ExternalShopID = "" },
	} {
		req := listing("pub-1", "Mug")
		mutate(&req)
		_, err := sim.CreateListing(context.Background(), req)
		assert.True(t, domain.IsCode(err, domain.CodeValidation), "%s: %v", name, err)
	}
	req := listing("pub-1", "Mug")
	req.Credentials.APIKey = platformsim.InvalidAPIKey
	_, err := sim.CreateListing(context.Background(), req)
	assert.True(t, domain.IsCode(err, domain.CodeForbidden), "got %v", err)
	assert.NotContains(t, err.Error(), platformsim.InvalidAPIKey)
	assert.Zero(t, sim.ListingCount())
	assert.Zero(t, sim.EffectCount())
}

// A new token for a SKU the shop lists replaces that listing's content
// under the same id (one listing per shop and SKU), and a restart that
// replays the effects knows it so; the first token still answers alone.
func TestCreateListingOfAListedSKUReplacesIt(t *testing.T) {
	j := &journal{}
	sim := platformsim.New(platformsim.WithJournal(j))
	ctx := context.Background()
	first := listing("pub-1", "Mug")
	first.SKU = "product-1"
	a, err := sim.CreateListing(ctx, first)
	require.NoError(t, err)
	second := listing("pub-2", "Mug, blue")
	second.SKU = "product-1"
	b, err := sim.CreateListing(ctx, second)
	require.NoError(t, err)
	assert.Equal(t, a.ExternalListingID, b.ExternalListingID)
	require.Equal(t, 1, sim.ListingCount())
	assert.Equal(t, "Mug, blue", sim.Listings()[0].Title)
	assert.Equal(t, 2, sim.EffectCount(), "one effect per token")

	other := listing("pub-3", "Mug")
	other.SKU, other.ExternalShopID = "product-1", "shop-2"
	c, err := sim.CreateListing(ctx, other)
	require.NoError(t, err)
	assert.NotEqual(t, a.ExternalListingID, c.ExternalListingID, "another shop lists it apart")

	restarted := platformsim.New()
	require.NoError(t, restarted.Restore(j.effects))
	assert.Equal(t, 2, restarted.ListingCount())
	assert.Equal(t, "Mug, blue", restarted.Listings()[0].Title)
	again, err := restarted.CreateListing(ctx, first)
	require.NoError(t, err)
	assert.Equal(t, a.ExternalListingID, again.ExternalListingID, "the first token answers again")
	assert.Equal(t, "Mug, blue", restarted.Listings()[0].Title, "and changes nothing")
}
