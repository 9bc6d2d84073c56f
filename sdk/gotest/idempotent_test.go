package gotest

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	once "github.com/oncehq/once/sdk/go"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
)

// keyRecorder remembers the Idempotency-Key of every attempt that leaves
// the client, and the status of its answer.
type keyRecorder struct {
	mu       sync.Mutex
	keys     []string
	statuses []int // 0: no answer
	next     http.RoundTripper
	// answered, when set, sees each answer before the client does.
	answered func(*http.Response)
}

func (r *keyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.next.RoundTrip(req)
	status := 0
	if err == nil {
		status = res.StatusCode
		if r.answered != nil {
			r.answered(res)
		}
	}
	r.mu.Lock()
	r.keys = append(r.keys, req.Header.Get("Idempotency-Key"))
	r.statuses = append(r.statuses, status)
	r.mu.Unlock()
	return res, err
}

func (r *keyRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.keys...)
}

func (r *keyRecorder) answers() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.statuses...)
}

// TestIdempotentRetryAfterACutConnectionExecutesOnce: the server executes
// createStore but the connection is cut before the answer arrives; the
// helper retries with the same key and gets the saved answer. A second
// execution would have answered 409 STORE_ALREADY_EXISTS (the same shop),
// and would have started a second verification.
func TestIdempotentRetryAfterACutConnectionExecutesOnce(t *testing.T) {
	s := apitest.Memory(t)
	proxy := faultproxy.Start(t, strings.TrimPrefix(s.URL, "http://"))
	// A fresh connection per attempt: net/http's own retry of a request
	// with an Idempotency-Key on a reused connection stays out of the way.
	rec := &keyRecorder{next: &http.Transport{DisableKeepAlives: true}}
	c, err := once.NewClient("http://"+proxy.Addr(), once.WithHTTPClient(&http.Client{Transport: rec}),
		once.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+s.Token)
			return nil
		}))
	require.NoError(t, err)

	apiKey, apiSecret := apitest.TestCredentials()
	body := once.CreateStoreRequest{
		Platform: once.CreateStoreRequestPlatformShopify, Name: "Cut shop", ExternalShopId: "cut-" + uuid.NewString(),
		Credentials: once.StoreCredentialsBody{ApiKey: &apiKey, ApiSecret: &apiSecret},
	}
	proxy.CutNextResponses(1)
	// Short waits: the test counts attempts, not time.
	fast := once.RetryPolicy{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond, MaxElapsed: 10 * time.Second}
	res, err := once.Idempotent(t.Context(), fast, func(ctx context.Context, key string) (*http.Response, error) {
		return c.CreateStore(ctx, &once.CreateStoreParams{IdempotencyKey: key}, body)
	}, once.ParseCreateStoreResponse)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, res.StatusCode(), "%s", res.Body)
	assert.Equal(t, "true", res.HTTPResponse.Header.Get("Idempotent-Replayed"), "the retry got the saved answer of the first execution")

	keys := rec.seen()
	require.Len(t, keys, 2, "one cut attempt, one retry")
	assert.Equal(t, keys[0], keys[1], "the retry reuses the key")
	_, err = uuid.Parse(keys[0])
	assert.NoError(t, err)

	ops := s.Do(t, http.MethodGet, "/v1/operations?kind=store.verify", nil, nil)
	var list once.OperationList
	ops.JSON(t, &list)
	assert.Len(t, list.Items, 1, "one execution: one verification started")
}
