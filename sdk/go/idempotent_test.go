package once

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
)

// keyRecorder remembers the Idempotency-Key of every attempt that leaves
// the client.
type keyRecorder struct {
	mu   sync.Mutex
	keys []string
	next http.RoundTripper
}

func (r *keyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.keys = append(r.keys, req.Header.Get("Idempotency-Key"))
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *keyRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.keys...)
}

// fastRetries keeps the waits short; the tests count attempts, not time.
var fastRetries = RetryPolicy{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond, MaxElapsed: 10 * time.Second}

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
	c, err := NewClient("http://"+proxy.Addr(), WithHTTPClient(&http.Client{Transport: rec}),
		WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+s.Token)
			return nil
		}))
	require.NoError(t, err)

	apiKey, apiSecret := apitest.TestCredentials()
	body := CreateStoreRequest{
		Platform: CreateStoreRequestPlatformShopify, Name: "Cut shop", ExternalShopId: "cut-" + uuid.NewString(),
		Credentials: StoreCredentialsBody{ApiKey: &apiKey, ApiSecret: &apiSecret},
	}
	proxy.CutNextResponses(1)
	res, err := Idempotent(t.Context(), fastRetries, func(ctx context.Context, key string) (*http.Response, error) {
		return c.CreateStore(ctx, &CreateStoreParams{IdempotencyKey: key}, body)
	}, ParseCreateStoreResponse)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, res.StatusCode(), "%s", res.Body)
	assert.Equal(t, "true", res.HTTPResponse.Header.Get("Idempotent-Replayed"), "the retry got the saved answer of the first execution")

	keys := rec.seen()
	require.Len(t, keys, 2, "one cut attempt, one retry")
	assert.Equal(t, keys[0], keys[1], "the retry reuses the key")
	_, err = uuid.Parse(keys[0])
	assert.NoError(t, err)

	ops := s.Do(t, http.MethodGet, "/v1/operations?kind=store.verify", nil, nil)
	var list OperationList
	ops.JSON(t, &list)
	assert.Len(t, list.Items, 1, "one execution: one verification started")
}

// stubAnswers answers attempt i with answers[i] (the last one repeats) and
// records the keys.
func stubAnswers(t *testing.T, answers ...func(w http.ResponseWriter)) (*Client, *keyRecorder, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		answers[min(i, len(answers)-1)](w)
	}))
	t.Cleanup(ts.Close)
	rec := &keyRecorder{next: http.DefaultTransport}
	c, err := NewClient(ts.URL, WithHTTPClient(&http.Client{Transport: rec}))
	require.NoError(t, err)
	return c, rec, &n
}

func problem(status int, code, retryAfter string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":` + strconv.Itoa(status) + `,"code":"` + code + `","title":"x","retry_same_key":false}`))
	}
}

func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{}`))
}

func verify(ctx context.Context, c *Client, p RetryPolicy) (*VerifyStoreResponse, error) {
	return Idempotent(ctx, p, func(ctx context.Context, key string) (*http.Response, error) {
		return c.VerifyStore(ctx, uuid.New(), &VerifyStoreParams{IdempotencyKey: key})
	}, ParseVerifyStoreResponse)
}

// TestIdempotentRetriesOnlyWhatCanSucceed: 5xx and IN_PROGRESS are retried
// with the same key; KEY_REUSED and other 4xx are final at once; retries
// stop at the deadline with the last answer.
func TestIdempotentRetriesOnlyWhatCanSucceed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  []func(http.ResponseWriter)
		attempts int
		status   int
	}{
		{"503 then success", []func(http.ResponseWriter){problem(503, "UNAVAILABLE", ""), accepted}, 2, 202},
		{"500 then success", []func(http.ResponseWriter){problem(500, "INTERNAL", ""), accepted}, 2, 202},
		{"in progress, after Retry-After, then the saved answer", []func(http.ResponseWriter){problem(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "0"), problem(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "0"), accepted}, 3, 202},
		{"key reused is final", []func(http.ResponseWriter){problem(409, "IDEMPOTENCY_KEY_REUSED", ""), accepted}, 1, 409},
		{"another conflict is final", []func(http.ResponseWriter){problem(409, "STORE_ALREADY_EXISTS", ""), accepted}, 1, 409},
		{"validation is final", []func(http.ResponseWriter){problem(422, "VALIDATION_FAILED", ""), accepted}, 1, 422},
		{"not found is final", []func(http.ResponseWriter){problem(404, "NOT_FOUND", ""), accepted}, 1, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rec, _ := stubAnswers(t, tc.answers...)
			res, err := verify(t.Context(), c, fastRetries)
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.StatusCode())
			keys := rec.seen()
			require.Len(t, keys, tc.attempts)
			for _, k := range keys {
				assert.Equal(t, keys[0], k, "every attempt sends the same key")
			}
		})
	}

	t.Run("a new logical call makes a new key", func(t *testing.T) {
		c, rec, _ := stubAnswers(t, accepted)
		_, err := verify(t.Context(), c, fastRetries)
		require.NoError(t, err)
		_, err = verify(t.Context(), c, fastRetries)
		require.NoError(t, err)
		keys := rec.seen()
		require.Len(t, keys, 2)
		assert.NotEqual(t, keys[0], keys[1])
	})

	t.Run("retries stop at the deadline with the last answer", func(t *testing.T) {
		c, rec, _ := stubAnswers(t, problem(503, "UNAVAILABLE", ""))
		p := fastRetries
		p.MaxElapsed = 50 * time.Millisecond
		res, err := verify(t.Context(), c, p)
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode())
		require.NotNil(t, res.ApplicationproblemJSON503)
		assert.Equal(t, "UNAVAILABLE", res.ApplicationproblemJSON503.Code)
		assert.Greater(t, len(rec.seen()), 1, "it retried before giving up")
	})

	t.Run("a network error is retried with the same key", func(t *testing.T) {
		rec := &keyRecorder{next: failingOnce(http.DefaultTransport)}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { accepted(w) }))
		t.Cleanup(ts.Close)
		c, err := NewClient(ts.URL, WithHTTPClient(&http.Client{Transport: rec}))
		require.NoError(t, err)
		res, err := verify(t.Context(), c, fastRetries)
		require.NoError(t, err)
		assert.Equal(t, http.StatusAccepted, res.StatusCode())
		keys := rec.seen()
		require.Len(t, keys, 2)
		assert.Equal(t, keys[0], keys[1])
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// failingOnce fails the first attempt as a refused connection would.
func failingOnce(next http.RoundTripper) http.RoundTripper {
	var failed atomic.Bool
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if failed.CompareAndSwap(false, true) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		}
		return next.RoundTrip(r)
	})
}
