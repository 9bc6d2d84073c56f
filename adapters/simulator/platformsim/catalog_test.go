package platformsim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func fetch(shop string) ports.FetchCatalogRequest {
	return ports.FetchCatalogRequest{
		Platform: "shopify", ExternalShopID: shop,
		Credentials: model.StoreCredentials{APIKey: "ak", APISecret: "sk_secret"},
	}
}

// An unconfigured shop has the same generated listings every time, and
// reading them has no effect.
func TestFetchCatalogDefaultIsDeterministic(t *testing.T) {
	sim := platformsim.New()
	first, err := sim.FetchCatalog(context.Background(), fetch("shop-1"))
	require.NoError(t, err)
	second, err := sim.FetchCatalog(context.Background(), fetch("shop-1"))
	require.NoError(t, err)
	assert.Len(t, first, platformsim.DefaultCatalogSize)
	assert.Equal(t, first, second)
	assert.Equal(t, platformsim.DefaultCatalog("shop-1"), first)

	other, err := sim.FetchCatalog(context.Background(), fetch("shop-2"))
	require.NoError(t, err)
	assert.NotEqual(t, first[0].ExternalID, other[0].ExternalID)
	assert.Zero(t, sim.EffectCount())
	for _, c := range sim.Calls() {
		assert.Equal(t, platformsim.CallFetchCatalog, c.Kind)
		assert.Equal(t, platformsim.DefaultCatalogSize, c.Items)
	}
}

// SetCatalog decides a shop's listings; listings created there join them.
func TestFetchCatalogSetAndCreatedListings(t *testing.T) {
	sim := platformsim.New()
	sim.SetCatalog("shop-1", []ports.CatalogListing{{ExternalID: "a", Title: "A", PriceMinor: 1, Currency: "EUR"}})
	sim.SetCatalog("empty", nil)

	got, err := sim.FetchCatalog(context.Background(), fetch("shop-1"))
	require.NoError(t, err)
	assert.Equal(t, []ports.CatalogListing{{ExternalID: "a", Title: "A", PriceMinor: 1, Currency: "EUR"}}, got)
	got, err = sim.FetchCatalog(context.Background(), fetch("empty"))
	require.NoError(t, err)
	assert.Empty(t, got)

	res, err := sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
	require.NoError(t, err)
	got, err = sim.FetchCatalog(context.Background(), fetch("shop-1"))
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, ports.CatalogListing{ExternalID: res.ExternalListingID, Title: "Mug", PriceMinor: 1999, Currency: "EUR"}, got[1])
}

func TestFetchCatalogFailuresInjected(t *testing.T) {
	sim := platformsim.New()
	sim.FailNext(1, nil)
	_, err := sim.FetchCatalog(context.Background(), fetch("shop-1"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "got %v", err)
	sim.FailAfterEffect(1)
	_, err = sim.FetchCatalog(context.Background(), fetch("shop-1"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "got %v", err)
	got, err := sim.FetchCatalog(context.Background(), fetch("shop-1"))
	require.NoError(t, err)
	assert.Len(t, got, platformsim.DefaultCatalogSize)

	req := fetch("shop-1")
	req.Credentials.APIKey = platformsim.InvalidAPIKey
	_, err = sim.FetchCatalog(context.Background(), req)
	assert.True(t, domain.IsCode(err, domain.CodeForbidden), "got %v", err)
	req = fetch("shop-1")
	req.Platform = "myspace"
	_, err = sim.FetchCatalog(context.Background(), req)
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)
	assert.Zero(t, sim.EffectCount())
}
