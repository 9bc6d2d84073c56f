package once

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The SDK module's own tests use only its own dependencies and the standard
// library (no testify): a test dependency of this module would be listed in
// every consumer's go.sum. The tests against a real server live in the
// service module (sdk/gotest).

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

// stubAnswers answers attempt i with answers[i] (the last one repeats) and
// records the keys.
func stubAnswers(t *testing.T, answers ...func(w http.ResponseWriter)) (*Client, *keyRecorder) {
	t.Helper()
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		answers[min(i, len(answers)-1)](w)
	}))
	t.Cleanup(ts.Close)
	rec := &keyRecorder{next: http.DefaultTransport}
	c, err := NewClient(ts.URL, WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
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

// sameKey fails the test unless every attempt sent the first attempt's key.
func sameKey(t *testing.T, keys []string) {
	t.Helper()
	for i, k := range keys {
		if k != keys[0] {
			t.Errorf("attempt %d sent key %q, the first sent %q: every attempt sends the same key", i+1, k, keys[0])
		}
	}
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
			c, rec := stubAnswers(t, tc.answers...)
			res, err := verify(context.Background(), c, fastRetries)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode() != tc.status {
				t.Errorf("status %d, want %d", res.StatusCode(), tc.status)
			}
			keys := rec.seen()
			if len(keys) != tc.attempts {
				t.Fatalf("%d attempts, want %d", len(keys), tc.attempts)
			}
			sameKey(t, keys)
		})
	}

	t.Run("a new logical call makes a new key", func(t *testing.T) {
		c, rec := stubAnswers(t, accepted)
		for range 2 {
			if _, err := verify(context.Background(), c, fastRetries); err != nil {
				t.Fatal(err)
			}
		}
		keys := rec.seen()
		if len(keys) != 2 || keys[0] == keys[1] {
			t.Fatalf("keys %q: want two different keys", keys)
		}
	})

	t.Run("retries stop at the deadline with the last answer", func(t *testing.T) {
		c, rec := stubAnswers(t, problem(503, "UNAVAILABLE", ""))
		p := fastRetries
		p.MaxElapsed = 50 * time.Millisecond
		res, err := verify(context.Background(), c, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 503", res.StatusCode())
		}
		if res.ApplicationproblemJSON503 == nil || res.ApplicationproblemJSON503.Code != "UNAVAILABLE" {
			t.Errorf("the last answer is not parsed as the UNAVAILABLE problem: %s", res.Body)
		}
		if n := len(rec.seen()); n < 2 {
			t.Errorf("%d attempt(s): it should retry before giving up", n)
		}
	})

	t.Run("a network error is retried with the same key", func(t *testing.T) {
		rec := &keyRecorder{next: failingOnce(http.DefaultTransport)}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { accepted(w) }))
		t.Cleanup(ts.Close)
		c, err := NewClient(ts.URL, WithHTTPClient(&http.Client{Transport: rec}))
		if err != nil {
			t.Fatal(err)
		}
		res, err := verify(context.Background(), c, fastRetries)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusAccepted {
			t.Errorf("status %d, want 202", res.StatusCode())
		}
		keys := rec.seen()
		if len(keys) != 2 {
			t.Fatalf("%d attempts, want 2", len(keys))
		}
		sameKey(t, keys)
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
