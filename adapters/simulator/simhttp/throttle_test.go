package simhttp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
)

// listingOf is a listing of shop on platform.
func listingOf(token, platform, shop string) ports.CreateListingRequest {
	r := listing(token, "Mug")
	r.Platform, r.ExternalShopID = platform, shop
	return r
}

// post sends a listing's create by hand, for what the Client does not
// show: the headers of the answer.
func (s *sim) post(t *testing.T, token, platform, shop string) *http.Response {
	t.Helper()
	body := fmt.Sprintf(`{"platform":%q,"external_shop_id":%q,"title":"Mug","price_minor":900,"currency":"EUR"}`, platform, shop)
	req, err := http.NewRequest(http.MethodPost, s.http.URL+simhttp.PathListings, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(simhttp.HeaderIdempotencyKey, token)
	req.Header.Set(simhttp.HeaderAPIKey, shopCreds.APIKey)
	req.Header.Set(simhttp.HeaderAPISecret, shopCreds.APISecret)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res
}

// Shopify's bucket: 40 calls of a shop at once pass, the 41st is throttled
// (429, Retry-After rounded up to 1 s) and does nothing; another shop has
// its own bucket; once a unit leaked out, the 41st passes.
func TestSimShopBucketThrottlesTheCallPastItsCapacity(t *testing.T) {
	ctx := context.Background()
	clock := apitest.NewManualClock()
	s := startSimWith(t, "", simhttp.ServerOptions{
		Clock:       clock,
		ShopBuckets: map[string]simcore.BucketSize{"shopify": {Capacity: 40, LeakPerSecond: 2}},
	})
	c := s.client(t, 5*time.Second)
	for i := range 40 {
		_, err := c.CreateListing(ctx, listingOf(fmt.Sprintf("pub-%d", i), "shopify", "shop-a"))
		require.NoError(t, err, "call %d", i+1)
	}
	_, err := c.CreateListing(ctx, listingOf("pub-40", "shopify", "shop-a"))
	wait, throttled := platformerr.ThrottledFor(err)
	require.True(t, throttled, "%v", err)
	assert.Equal(t, time.Second, wait, "half a second, rounded up")
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable))
	assert.Equal(t, platformerr.ScopeAccount, platformerr.ThrottledScope(err), "the shop's own quota is spent")
	assert.Zero(t, s.effects(t, "pub-40"), "a throttled call does nothing")

	res := s.post(t, "pub-40", "shopify", "shop-a")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "1", res.Header.Get("Retry-After"))
	assert.Equal(t, "shop", res.Header.Get(simhttp.HeaderRateLimitScope))
	assert.Equal(t, "40/40", res.Header.Get(simhttp.HeaderCallLimit))

	res = s.post(t, "pub-b1", "shopify", "shop-b")
	assert.Equal(t, http.StatusOK, res.StatusCode, "another shop, another bucket")
	assert.Equal(t, "1/40", res.Header.Get(simhttp.HeaderCallLimit))
	res = s.post(t, "am-1", "amazon", "shop-a")
	assert.Empty(t, res.Header.Get(simhttp.HeaderCallLimit), "amazon has no shop bucket")

	clock.Advance(500 * time.Millisecond)
	_, err = c.CreateListing(ctx, listingOf("pub-40", "shopify", "shop-a"))
	require.NoError(t, err, "one unit leaked out")
	assert.Equal(t, 1, s.effects(t, "pub-40"))

	throttles, err := s.admin.Throttles(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"shopify": 2}, throttles.PerPlatform)
	assert.Equal(t, map[string]int{"shopify/shop-a": 2}, throttles.PerShop)
}

// A platform bucket meters every shop of the platform together; its wait
// is rounded up to whole seconds.
func TestSimPlatformBucketMetersAllItsShops(t *testing.T) {
	ctx := context.Background()
	clock := apitest.NewManualClock()
	s := startSimWith(t, "", simhttp.ServerOptions{Clock: clock})
	require.NoError(t, s.admin.SetBucket(ctx, "amazon", simhttp.ScopePlatform, simcore.BucketSize{Capacity: 2, LeakPerSecond: 0.4}))
	c := s.client(t, 5*time.Second)
	for i, shop := range []string{"a", "b"} {
		_, err := c.CreateListing(ctx, listingOf(fmt.Sprint("am-", i), "amazon", shop))
		require.NoError(t, err)
	}
	res := s.post(t, "am-2", "amazon", "c")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "3", res.Header.Get("Retry-After"), "2.5 s rounded up")
	assert.Equal(t, "application", res.Header.Get(simhttp.HeaderRateLimitScope), "the application's quota, not the shop's, is spent")
	_, err := c.CreateListing(ctx, listingOf("am-3", "amazon", "d"))
	assert.Equal(t, platformerr.ScopeApplication, platformerr.ThrottledScope(err), "the client says which: %v", err)
	_, err = c.CreateListing(ctx, listingOf("sh-1", "shopify", "a"))
	require.NoError(t, err, "shopify is not amazon")

	require.NoError(t, s.admin.ClearBucket(ctx, "amazon", simhttp.ScopePlatform))
	_, err = c.CreateListing(ctx, listingOf("am-2", "amazon", "c"))
	require.NoError(t, err, "no bucket, no limit")
	throttles, err := s.admin.Throttles(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"amazon": 2}, throttles.PerPlatform)
	require.NoError(t, s.admin.ResetCounters(ctx))
	throttles, err = s.admin.Throttles(ctx)
	require.NoError(t, err)
	assert.Empty(t, throttles.PerPlatform)
}

// An outage of shopify answers its calls 503 without acting, and amazon
// answers all along.
func TestSimOutageOfOnePlatform(t *testing.T) {
	ctx := context.Background()
	s := startSim(t, "")
	c := s.client(t, 5*time.Second)
	require.NoError(t, s.admin.TakeDown(ctx, "shopify"))
	_, err := c.CreateListing(ctx, listingOf("sh-1", "shopify", "a"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	_, throttled := platformerr.ThrottledFor(err)
	assert.False(t, throttled, "an outage is no 429")
	_, err = c.VerifyCredentials(ctx, ports.VerifyCredentialsRequest{RequestToken: "v-1", Platform: "shopify", ExternalShopID: "a", Credentials: shopCreds})
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "every shopify call: %v", err)
	_, err = c.CreateListing(ctx, listingOf("am-1", "amazon", "a"))
	require.NoError(t, err)
	assert.Zero(t, s.effects(t, "sh-1"))

	require.NoError(t, s.admin.BringUp(ctx, "shopify"))
	_, err = c.CreateListing(ctx, listingOf("sh-1", "shopify", "a"))
	require.NoError(t, err)
}

// A scheduled outage starts and ends on the server's clock.
func TestSimScheduledOutage(t *testing.T) {
	ctx := context.Background()
	clock := apitest.NewManualClock()
	o, err := simhttp.ParseOutage("shopify@30s+10m")
	require.NoError(t, err)
	s := startSimWith(t, "", simhttp.ServerOptions{Clock: clock, Outages: []simhttp.Outage{o}})
	c := s.client(t, 5*time.Second)
	status := func() error { _, err := c.CreateListing(ctx, listingOf("sh-1", "shopify", "a")); return err }

	require.NoError(t, status(), "before the outage")
	clock.Advance(30 * time.Second)
	assert.True(t, domain.IsCode(status(), domain.CodeUnavailable), "during")
	clock.Advance(10*time.Minute - time.Second)
	assert.Error(t, status(), "still during")
	clock.Advance(time.Second)
	require.NoError(t, status(), "after")
}

// A platform's own latency replaces the server's: an hour for amazon
// times its calls out while shopify answers.
func TestSimPlatformLatency(t *testing.T) {
	ctx := context.Background()
	s := startSimWith(t, "", simhttp.ServerOptions{PlatformLatency: map[string]time.Duration{"amazon": time.Hour}})
	c := s.client(t, 200*time.Millisecond)
	_, err := c.CreateListing(ctx, listingOf("am-1", "amazon", "a"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "timed out: %v", err)
	_, err = c.CreateListing(ctx, listingOf("sh-1", "shopify", "a"))
	require.NoError(t, err)

	require.NoError(t, s.admin.ClearPlatformLatency(ctx, "amazon"))
	require.NoError(t, s.admin.SetPlatformLatency(ctx, "shopify", time.Hour))
	_, err = c.CreateListing(ctx, listingOf("am-2", "amazon", "a"))
	require.NoError(t, err, "amazon's latency cleared")
	_, err = c.CreateListing(ctx, listingOf("sh-2", "shopify", "a"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "shopify's set: %v", err)
}

func TestSimAdminRefusesBadPlatformSettings(t *testing.T) {
	ctx := context.Background()
	s := startSim(t, "")
	assert.ErrorContains(t, s.admin.TakeDown(ctx, "ebay"), "422")
	assert.ErrorContains(t, s.admin.SetBucket(ctx, "shopify", "galaxy", simcore.BucketSize{Capacity: 1, LeakPerSecond: 1}), "422")
	assert.ErrorContains(t, s.admin.SetBucket(ctx, "shopify", simhttp.ScopeShop, simcore.BucketSize{Capacity: 0, LeakPerSecond: 1}), "422")
	assert.ErrorContains(t, s.admin.SetPlatformLatency(ctx, "shopify", -time.Second), "422")
}

func TestSimPlatformSettingsParse(t *testing.T) {
	lat, err := simhttp.ParsePlatformLatency(map[string]string{"shopify": "200ms", "amazon": "50ms"})
	require.NoError(t, err)
	assert.Equal(t, map[string]time.Duration{"shopify": 200 * time.Millisecond, "amazon": 50 * time.Millisecond}, lat)
	buckets, err := simhttp.ParseBuckets(map[string]string{"shopify": "40:2", "amazon": "10:0.5"})
	require.NoError(t, err)
	assert.Equal(t, simcore.BucketSize{Capacity: 10, LeakPerSecond: 0.5}, buckets["amazon"])
	o, err := simhttp.ParseOutage("tiktok@1m")
	require.NoError(t, err)
	assert.Equal(t, simhttp.Outage{Platform: "tiktok", From: time.Minute}, o, "no length: for ever")

	for _, bad := range []map[string]string{{"ebay": "1s"}, {"shopify": "soon"}, {"shopify": "-1s"}} {
		_, err := simhttp.ParsePlatformLatency(bad)
		assert.Error(t, err, "%v", bad)
	}
	for _, bad := range []map[string]string{{"shopify": "40"}, {"shopify": "x:2"}, {"shopify": "40:y"}, {"shopify": "0:2"}, {"shopify": "40:0"}} {
		_, err := simhttp.ParseBuckets(bad)
		assert.Error(t, err, "%v", bad)
	}
	for _, bad := range []string{"shopify", "ebay@1s", "shopify@soon", "shopify@1s+ever", "shopify@-1s"} {
		_, err := simhttp.ParseOutage(bad)
		assert.Error(t, err, bad)
	}
	_, err = simhttp.NewServer(nil, simhttp.ServerOptions{ShopBuckets: map[string]simcore.BucketSize{"ebay": {Capacity: 1, LeakPerSecond: 1}}})
	assert.ErrorContains(t, err, "ebay")
}
