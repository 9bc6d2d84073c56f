package gotest

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	once "github.com/oncehq/once/sdk/go"
	"github.com/oncehq/once/testsupport/apitest"
)

// rateLimited starts the service with a rate of one write per second and
// no burst (ONCE_RATE_LIMIT=1/s:1), on a clock that stands still: once the
// workspace has written, its next write is refused with Retry-After: 1
// until the test moves the clock, however slow the machine is.
func rateLimited(t *testing.T) (*apitest.Server, *apitest.ManualClock) {
	t.Helper()
	cfg := apitest.Config("")
	cfg.RateLimit = "1/s:1"
	clock := apitest.NewManualClock()
	s := apitest.Start(t, cfg, nil, apitest.WithClock(clock))
	// The workspace's one write of this second.
	r := s.Do(t, http.MethodPost, "/v1/stores", storeRequest("spent-"+uuid.NewString()), map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return s, clock
}

func storeRequest(shop string) once.CreateStoreRequest {
	apiKey, apiSecret := apitest.TestCredentials()
	return once.CreateStoreRequest{
		Platform: once.CreateStoreRequestPlatformShopify, Name: "Limited shop", ExternalShopId: shop,
		Credentials: once.StoreCredentialsBody{ApiKey: &apiKey, ApiSecret: &apiSecret},
	}
}

// createStore is one logical createStore call through the helper.
func createStore(ctx context.Context, t *testing.T, s *apitest.Server, rec *keyRecorder, p once.RetryPolicy) (*once.CreateStoreResponse, error) {
	t.Helper()
	c, err := once.NewClient(s.URL, once.WithHTTPClient(&http.Client{Transport: rec}),
		once.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+s.Token)
			return nil
		}))
	require.NoError(t, err)
	body := storeRequest("limited-" + uuid.NewString())
	return once.Idempotent(ctx, p, func(ctx context.Context, key string) (*http.Response, error) {
		return c.CreateStore(ctx, &once.CreateStoreParams{IdempotencyKey: key}, body)
	}, once.ParseCreateStoreResponse)
}

// TestIdempotentWaitsOutARateLimit: over the workspace's rate, the helper
// gets 429 with Retry-After, waits it, and sends the same key again, which
// the server then executes (once).
func TestIdempotentWaitsOutARateLimit(t *testing.T) {
	s, clock := rateLimited(t)
	rec := &keyRecorder{next: http.DefaultTransport, answered: func(res *http.Response) {
		if res.StatusCode != http.StatusTooManyRequests {
			return
		}
		// The second the server asked the client to wait passes on the
		// service's clock too.
		secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
		if assert.NoError(t, err, "Retry-After %q", res.Header.Get("Retry-After")) {
			clock.Advance(time.Duration(secs) * time.Second)
		}
	}}

	res, err := createStore(t.Context(), t, s, rec, once.RetryPolicy{})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, res.StatusCode(), "%s", res.Body)
	assert.Empty(t, res.HTTPResponse.Header.Get("Idempotent-Replayed"), "the retry executed: the refused attempt ran nothing")

	assert.Equal(t, []int{http.StatusTooManyRequests, http.StatusCreated}, rec.answers(), "refused once, then executed")
	keys := rec.seen()
	require.Len(t, keys, 2)
	assert.Equal(t, keys[0], keys[1], "the retry reuses the key")
	assert.Equal(t, 2, verifications(t, s), "the store created beforehand, and this one once")
}

// TestIdempotentGivesUpAtTheDeadlineWithTheLast429: while the rate stays
// used up, the helper retries after each Retry-After until the next wait
// would end past its deadline, and then returns the last 429, parsed, not
// an error.
func TestIdempotentGivesUpAtTheDeadlineWithTheLast429(t *testing.T) {
	s, _ := rateLimited(t) // the clock never moves: every attempt is refused
	rec := &keyRecorder{next: http.DefaultTransport}

	res, err := createStore(t.Context(), t, s, rec, once.RetryPolicy{MaxElapsed: 4 * time.Second})
	require.NoError(t, err, "the last answer, not a timeout")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode(), "%s", res.Body)
	require.NotNil(t, res.ApplicationproblemJSON429, "the 429 is parsed: %s", res.Body)
	assert.Equal(t, "RATE_LIMITED", res.ApplicationproblemJSON429.Code)
	assert.True(t, res.ApplicationproblemJSON429.RetrySameKey)
	assert.Equal(t, "1", res.HTTPResponse.Header.Get("Retry-After"))

	statuses := rec.answers()
	assert.GreaterOrEqual(t, len(statuses), 2, "it retried after Retry-After before giving up")
	for i, status := range statuses {
		assert.Equal(t, http.StatusTooManyRequests, status, "attempt %d", i+1)
	}
	keys := rec.seen()
	for i, k := range keys {
		assert.Equal(t, keys[0], k, "attempt %d sends the first attempt's key", i+1)
	}
	assert.Equal(t, 1, verifications(t, s), "nothing ran but the write beforehand")
}

// verifications counts the stores created: each starts one verification.
func verifications(t *testing.T, s *apitest.Server) int {
	t.Helper()
	var list once.OperationList
	s.Do(t, http.MethodGet, "/v1/operations?kind=store.verify", nil, nil).JSON(t, &list)
	return len(list.Items)
}
