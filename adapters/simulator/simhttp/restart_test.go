package simhttp_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

var (
	shopCreds = model.StoreCredentials{APIKey: "ak_restart_key", APISecret: "sk_restart_secret"}
	signedURL = "https://cdn.supplier.example/a.png?X-Amz-Signature=sig_restart_secret"
)

func listing(token, title string) ports.CreateListingRequest {
	return ports.CreateListingRequest{
		RequestToken: token, Platform: "shopify", ExternalShopID: "shop-r", Credentials: shopCreds,
		Title: title, PriceMinor: 900, Currency: "EUR",
	}
}

// A server restarted on the same ledger answers every token it executed
// before with the first outcome and records no second effect; listings
// keep their numbers and stay in the shop's catalog.
func TestSimTokensSurviveARestart(t *testing.T) {
	ctx := context.Background()
	first := startSim(t, "")
	c := first.client(t, 5*time.Second)
	verified, err := c.VerifyCredentials(ctx, ports.VerifyCredentialsRequest{
		RequestToken: "op-1", Platform: "shopify", ExternalShopID: "shop-r", Credentials: shopCreds,
	})
	require.NoError(t, err)
	listed, err := c.CreateListing(ctx, listing("pub-1", "Mug"))
	require.NoError(t, err)
	generated, err := c.Generate(ctx, ports.AIRequest{RequestToken: "ai-1", Kind: model.AIText, Title: "Mug"})
	require.NoError(t, err)
	_, _, err = c.Fetch(ctx, signedURL)
	require.NoError(t, err)
	first.stop()

	second := startSim(t, first.path)
	c = second.client(t, 5*time.Second)
	again, err := c.VerifyCredentials(ctx, ports.VerifyCredentialsRequest{
		RequestToken: "op-1", Platform: "shopify", ExternalShopID: "shop-r", Credentials: shopCreds,
	})
	require.NoError(t, err)
	assert.Equal(t, verified, again)
	relisted, err := c.CreateListing(ctx, listing("pub-1", "Mug"))
	require.NoError(t, err)
	assert.Equal(t, listed, relisted)
	_, err = c.CreateListing(ctx, listing("pub-1", "Cup"))
	assert.True(t, domain.IsCode(err, domain.CodeConflict), "the first request is remembered: %v", err)
	regenerated, err := c.Generate(ctx, ports.AIRequest{RequestToken: "ai-1", Kind: model.AIText, Title: "changed"})
	require.NoError(t, err)
	assert.Equal(t, generated, regenerated)

	next, err := c.CreateListing(ctx, listing("pub-2", "Cup"))
	require.NoError(t, err)
	assert.NotEqual(t, listed.ExternalListingID, next.ExternalListingID, "numbering goes on")
	catalog, err := c.FetchCatalog(ctx, ports.FetchCatalogRequest{Platform: "shopify", ExternalShopID: "shop-r", Credentials: shopCreds})
	require.NoError(t, err)
	var ids []string
	for _, l := range catalog {
		ids = append(ids, l.ExternalID)
	}
	assert.Subset(t, ids, []string{listed.ExternalListingID, next.ExternalListingID})

	for _, token := range []string{"op-1", "pub-1", "ai-1", "pub-2"} {
		assert.Equal(t, 1, second.effects(t, token), token)
	}
	effects, err := second.admin.Ledger(ctx, simhttp.Filter{EffectsOnly: true})
	require.NoError(t, err)
	assert.Len(t, effects, 4)
	reads, err := second.admin.Ledger(ctx, simhttp.Filter{Kind: simhttp.KindFetch})
	require.NoError(t, err)
	require.Len(t, reads, 1)
	assert.Equal(t, "https://cdn.supplier.example/a.png", reads[0].Subject)
	assert.False(t, reads[0].Effect)

	// Neither the ledger nor the logs hold a credential or a signature.
	second.stop()
	raw, err := os.ReadFile(first.path)
	require.NoError(t, err)
	for _, secret := range []string{shopCreds.APIKey, shopCreds.APISecret, "sig_restart_secret"} {
		assert.NotContains(t, string(raw), secret)
		assert.NotContains(t, first.logs.String()+second.logs.String(), secret)
	}
}
