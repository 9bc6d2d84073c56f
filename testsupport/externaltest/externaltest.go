// Package externaltest is the contract suite of the ports to external
// systems (PlatformGateway, AIProvider, MaterialSource): what the workers
// rely on, checked the same way against the in-process simulators and
// against the HTTP clients of `once sim` (adapters/simulator/simhttp). A real
// integration should pass it too, against a sandbox.
package externaltest

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// System names one of the external systems, for the fault hooks.
type System string

const (
	Platform System = "platform"
	AI       System = "ai"
	Material System = "material"
)

// Systems are fresh external systems under test and the means to observe
// and steer them.
type Systems struct {
	Platform ports.PlatformGateway
	AI       ports.AIProvider
	Material ports.MaterialSource
	// Effects returns how many side effects the systems performed for
	// token: verifications, listings created, AI charges.
	Effects func(t *testing.T, token string) int
	// FailNext makes the next n calls to system fail transiently before it
	// acts. For the material source the suite names the URL it fetches
	// next (an implementation may fail the next n fetches of any URL).
	FailNext func(t *testing.T, system System, n int, url string)
	// LoseNextAnswer makes the next call to system (Platform or AI) act,
	// then fail transiently: the effect happened and the caller never
	// heard of it.
	LoseNextAnswer func(t *testing.T, system System)
}

// Credentials the suite sends; no error may repeat them.
const (
	apiKey    = "ak_contract_key"
	apiSecret = "sk_contract_secret_0123"
	// rejectedKey is the key the simulators' default rule rejects.
	rejectedKey = "invalid"
	// forbiddenWord in AI instructions makes the provider refuse.
	forbiddenWord = "forbidden"
	// missingHost is the host where the material source has no file.
	missingHost = "missing"
)

var creds = model.StoreCredentials{APIKey: apiKey, APISecret: apiSecret}

// Run runs the suite; newSystems is called once per subtest.
func Run(t *testing.T, newSystems func(t *testing.T) Systems) {
	tests := map[string]func(*testing.T, Systems){
		"VerifyOncePerToken":             verifyOncePerToken,
		"ListingOncePerToken":            listingOncePerToken,
		"CatalogReadsShopAndListings":    catalogReadsShopAndListings,
		"GenerateChargedOncePerToken":    generateChargedOncePerToken,
		"FetchServesTheSameBytes":        fetchServesTheSameBytes,
		"PermanentErrorsWithoutSecrets":  permanentErrorsWithoutSecrets,
		"TransientBeforeActing":          transientBeforeActing,
		"LostAnswerRetriedWithoutEffect": lostAnswerRetriedWithoutEffect,
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) { test(t, newSystems(t)) })
	}
}

func verifyReq(token, shop string) ports.VerifyCredentialsRequest {
	return ports.VerifyCredentialsRequest{RequestToken: token, Platform: "shopify", ExternalShopID: shop, Credentials: creds}
}

func listingReq(token, title string) ports.CreateListingRequest {
	return ports.CreateListingRequest{
		RequestToken: token, Platform: "shopify", ExternalShopID: "shop-c", Credentials: creds,
		Title: title, Description: "Blue linen", PriceMinor: 2500, Currency: "USD",
	}
}

func aiReq(token string, kind model.AIKind) ports.AIRequest {
	return ports.AIRequest{RequestToken: token, Kind: kind, Title: "Cast iron pan", Description: "28 cm", Instructions: "short"}
}

// assertCode checks err's code and that it repeats no secret.
func assertCode(t *testing.T, err error, code domain.Code, secrets ...string) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, code, domain.ErrorCode(err), "%v", err)
	for _, s := range append(secrets, apiSecret) {
		assert.NotContains(t, err.Error(), s)
	}
}

func verifyOncePerToken(t *testing.T, s Systems) {
	ctx := context.Background()
	first, err := s.Platform.VerifyCredentials(ctx, verifyReq("verify-1", "shop-a"))
	require.NoError(t, err)
	assert.True(t, first.Valid)
	again, err := s.Platform.VerifyCredentials(ctx, verifyReq("verify-1", "shop-a"))
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Equal(t, 1, s.Effects(t, "verify-1"), "a repeated token acts once")

	rejected := verifyReq("verify-2", "shop-a")
	rejected.Credentials.APIKey = rejectedKey
	r, err := s.Platform.VerifyCredentials(ctx, rejected)
	require.NoError(t, err, "a rejected credential is a result, not an error")
	assert.False(t, r.Valid)
	assert.NotEmpty(t, r.Reason)
	assert.NotContains(t, r.Reason, rejectedKey)
	assert.Equal(t, 1, s.Effects(t, "verify-2"))

	_, err = s.Platform.VerifyCredentials(ctx, verifyReq("verify-1", "shop-b"))
	assertCode(t, err, domain.CodeConflict)
	assert.Equal(t, 1, s.Effects(t, "verify-1"))
}

func listingOncePerToken(t *testing.T, s Systems) {
	ctx := context.Background()
	first, err := s.Platform.CreateListing(ctx, listingReq("pub-1", "Linen shirt"))
	require.NoError(t, err)
	require.NotEmpty(t, first.ExternalListingID)

	rotated := listingReq("pub-1", "Linen shirt")
	rotated.Credentials = model.StoreCredentials{APIKey: "ak_rotated", APISecret: "sk_rotated"}
	again, err := s.Platform.CreateListing(ctx, rotated)
	require.NoError(t, err)
	assert.Equal(t, first, again, "a retry with rotated credentials is the same request")
	assert.Equal(t, 1, s.Effects(t, "pub-1"))

	_, err = s.Platform.CreateListing(ctx, listingReq("pub-1", "Another shirt"))
	assertCode(t, err, domain.CodeConflict)
	var de *domain.Error
	require.True(t, errors.As(err, &de))
	assert.Equal(t, first.ExternalListingID, de.ResourceID, "the conflict names the listing the token made")

	second, err := s.Platform.CreateListing(ctx, listingReq("pub-2", "Linen shirt"))
	require.NoError(t, err)
	assert.NotEqual(t, first.ExternalListingID, second.ExternalListingID, "another token, another listing")
	assert.Equal(t, 1, s.Effects(t, "pub-2"))
}

func catalogReadsShopAndListings(t *testing.T, s Systems) {
	ctx := context.Background()
	read := ports.FetchCatalogRequest{Platform: "shopify", ExternalShopID: "shop-c", Credentials: creds}
	before, err := s.Platform.FetchCatalog(ctx, read)
	require.NoError(t, err)
	again, err := s.Platform.FetchCatalog(ctx, read)
	require.NoError(t, err)
	assert.Equal(t, before, again, "reading twice reads the same")

	created, err := s.Platform.CreateListing(ctx, listingReq("pub-cat", "Mug"))
	require.NoError(t, err)
	after, err := s.Platform.FetchCatalog(ctx, read)
	require.NoError(t, err)
	require.Len(t, after, len(before)+1)
	assert.Equal(t, ports.CatalogListing{ExternalID: created.ExternalListingID, Title: "Mug", PriceMinor: 2500, Currency: "USD"}, after[len(after)-1])
}

func generateChargedOncePerToken(t *testing.T, s Systems) {
	ctx := context.Background()
	first, err := s.AI.Generate(ctx, aiReq("ai-1", model.AIText))
	require.NoError(t, err)
	assert.Contains(t, first.Text, "Cast iron pan")
	assert.Positive(t, first.Units)
	edited := aiReq("ai-1", model.AIText)
	edited.Title = "edited meanwhile"
	again, err := s.AI.Generate(ctx, edited)
	require.NoError(t, err)
	assert.Equal(t, first, again, "a repeated token gets the first result")
	assert.Equal(t, 1, s.Effects(t, "ai-1"), "and is charged once")

	_, err = s.AI.Generate(ctx, aiReq("ai-1", model.AIImage))
	assertCode(t, err, domain.CodeConflict)

	img, err := s.AI.Generate(ctx, aiReq("ai-2", model.AIImage))
	require.NoError(t, err)
	assert.Equal(t, "image/png", img.ImageContentType)
	_, err = png.Decode(bytes.NewReader(img.Image))
	assert.NoError(t, err, "a real PNG")
	cat, err := s.AI.Generate(ctx, aiReq("ai-3", model.AICategory))
	require.NoError(t, err)
	assert.NotEmpty(t, cat.Category)
}

func fetchServesTheSameBytes(t *testing.T, s Systems) {
	ctx := context.Background()
	a1, ct, err := s.Material.Fetch(ctx, "https://supplier.example/a.png?sig=abc")
	require.NoError(t, err)
	assert.Equal(t, "image/png", ct)
	a2, _, err := s.Material.Fetch(ctx, "https://supplier.example/a.png?sig=abc")
	require.NoError(t, err)
	b, _, err := s.Material.Fetch(ctx, "https://supplier.example/b.png")
	require.NoError(t, err)
	assert.Equal(t, a1, a2)
	assert.NotEqual(t, a1, b)
	_, err = png.Decode(bytes.NewReader(a1))
	assert.NoError(t, err, "a real PNG")
}

func permanentErrorsWithoutSecrets(t *testing.T, s Systems) {
	ctx := context.Background()
	forbidden := listingReq("pub-forbidden", "Mug")
	forbidden.Credentials.APIKey = rejectedKey
	_, err := s.Platform.CreateListing(ctx, forbidden)
	assertCode(t, err, domain.CodeForbidden)
	assert.False(t, platformerr.Retryable(ctx, err))

	negative := listingReq("pub-negative", "Mug")
	negative.PriceMinor = -1
	_, err = s.Platform.CreateListing(ctx, negative)
	assertCode(t, err, domain.CodeValidation)
	_, err = s.Platform.CreateListing(ctx, listingReq("", "Mug"))
	assertCode(t, err, domain.CodeValidation)
	unknown := verifyReq("verify-unknown", "shop-a")
	unknown.Platform = "myspace"
	_, err = s.Platform.VerifyCredentials(ctx, unknown)
	assertCode(t, err, domain.CodeValidation)
	_, err = s.Platform.FetchCatalog(ctx, ports.FetchCatalogRequest{
		Platform: "shopify", ExternalShopID: "shop-c", Credentials: model.StoreCredentials{APIKey: rejectedKey, APISecret: apiSecret},
	})
	assertCode(t, err, domain.CodeForbidden)

	refused := aiReq("ai-refused", model.AIText)
	refused.Instructions = "make it sound " + forbiddenWord
	_, err = s.AI.Generate(ctx, refused)
	assertCode(t, err, domain.CodeValidation)
	_, err = s.AI.Generate(ctx, aiReq("ai-video", "video"))
	assertCode(t, err, domain.CodeValidation)

	_, _, err = s.Material.Fetch(ctx, "https://user:pw_secret@cdn."+missingHost+"/a.png?X-Amz-Signature=sig_secret")
	assertCode(t, err, domain.CodeNotFound, "pw_secret", "sig_secret")
	assert.False(t, platformerr.Retryable(ctx, err))
	_, _, err = s.Material.Fetch(ctx, "ftp://example.com/a.png?token=tok_secret")
	assertCode(t, err, domain.CodeValidation, "tok_secret")

	for _, token := range []string{"pub-forbidden", "pub-negative", "verify-unknown", "ai-refused", "ai-video"} {
		assert.Zero(t, s.Effects(t, token), "a refused request has no effect: %s", token)
	}
}

func transientBeforeActing(t *testing.T, s Systems) {
	ctx := context.Background()
	s.FailNext(t, Platform, 1, "")
	_, err := s.Platform.CreateListing(ctx, listingReq("pub-t", "Mug"))
	assertCode(t, err, domain.CodeUnavailable)
	assert.True(t, platformerr.Retryable(ctx, err))
	assert.Zero(t, s.Effects(t, "pub-t"), "nothing happened")
	_, err = s.Platform.CreateListing(ctx, listingReq("pub-t", "Mug"))
	require.NoError(t, err)
	assert.Equal(t, 1, s.Effects(t, "pub-t"))

	s.FailNext(t, AI, 1, "")
	_, err = s.AI.Generate(ctx, aiReq("ai-t", model.AIText))
	assertCode(t, err, domain.CodeUnavailable)
	assert.Zero(t, s.Effects(t, "ai-t"), "not charged")
	_, err = s.AI.Generate(ctx, aiReq("ai-t", model.AIText))
	require.NoError(t, err)
	assert.Equal(t, 1, s.Effects(t, "ai-t"))

	const u = "https://supplier.example/flaky.png?sig=flaky_secret"
	s.FailNext(t, Material, 2, u)
	for range 2 {
		_, _, err = s.Material.Fetch(ctx, u)
		assertCode(t, err, domain.CodeUnavailable, "flaky_secret")
		assert.True(t, platformerr.Retryable(ctx, err))
	}
	_, _, err = s.Material.Fetch(ctx, u)
	require.NoError(t, err)
}

func lostAnswerRetriedWithoutEffect(t *testing.T, s Systems) {
	ctx := context.Background()
	s.LoseNextAnswer(t, Platform)
	_, err := s.Platform.CreateListing(ctx, listingReq("pub-lost", "Mug"))
	assertCode(t, err, domain.CodeUnavailable)
	assert.True(t, platformerr.Retryable(ctx, err))
	assert.Equal(t, 1, s.Effects(t, "pub-lost"), "the platform acted")
	res, err := s.Platform.CreateListing(ctx, listingReq("pub-lost", "Mug"))
	require.NoError(t, err)
	assert.NotEmpty(t, res.ExternalListingID)
	assert.Equal(t, 1, s.Effects(t, "pub-lost"), "the retry acted no more")

	s.LoseNextAnswer(t, AI)
	_, err = s.AI.Generate(ctx, aiReq("ai-lost", model.AICategory))
	assertCode(t, err, domain.CodeUnavailable)
	assert.Equal(t, 1, s.Effects(t, "ai-lost"), "charged")
	r, err := s.AI.Generate(ctx, aiReq("ai-lost", model.AICategory))
	require.NoError(t, err)
	assert.NotEmpty(t, r.Category)
	assert.Equal(t, 1, s.Effects(t, "ai-lost"), "the retry is free")
}
