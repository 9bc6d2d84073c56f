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
		{"rate limited, after Retry-After, then success", []func(http.ResponseWriter){problem(429, "RATE_LIMITED", "0"), problem(429, "RATE_LIMITED", "0"), accepted}, 3, 202},
		{"rate limited until an HTTP-date already past", []func(http.ResponseWriter){problem(429, "RATE_LIMITED", "Wed, 21 Oct 2015 07:28:00 GMT"), accepted}, 2, 202},
		{"rate limited without Retry-After: the backoff", []func(http.ResponseWriter){problem(429, "RATE_LIMITED", ""), accepted}, 2, 202},
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
		p.MaxElapsed = time.Second // long enough for a second attempt on a loaded machine
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

// TestIdempotentGivesUpAtTheDeadlineWithTheLastAnswer: a wait that would
// end past the deadline (the policy's or the context's) is not waited: the
// answer that asked for it is returned, not a timeout.
func TestIdempotentGivesUpAtTheDeadlineWithTheLastAnswer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		code       string
		retryAfter string
		maxElapsed time.Duration
		ctxTimeout time.Duration
	}{
		{"Retry-After past MaxElapsed", 429, "RATE_LIMITED", "3600", 10 * time.Second, 0},
		{"Retry-After past the context's deadline", 429, "RATE_LIMITED", "3600", 0, 10 * time.Second},
		{"an HTTP-date past the context's deadline", 429, "RATE_LIMITED", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 0, 10 * time.Second},
		{"in progress, Retry-After within MaxElapsed but past the context's deadline", 409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "20", 0, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := stubAnswers(t, problem(tc.status, tc.code, tc.retryAfter), accepted)
			ctx := context.Background()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			p := fastRetries
			p.MaxElapsed = tc.maxElapsed
			var retries int
			p.OnRetry = func(error, time.Duration) { retries++ }
			res, err := verify(ctx, c, p)
			if err != nil {
				t.Fatalf("%v: the last answer is returned, not an error", err)
			}
			if res.StatusCode() != tc.status {
				t.Errorf("status %d, want %d", res.StatusCode(), tc.status)
			}
			parsed := res.ApplicationproblemJSON429
			if tc.status == http.StatusConflict {
				parsed = res.ApplicationproblemJSON409
			}
			if parsed == nil || parsed.Code != tc.code {
				t.Errorf("the last answer is not parsed as the %s problem: %s", tc.code, res.Body)
			}
			if n := len(rec.seen()); n != 1 || retries != 0 {
				t.Errorf("%d attempts and %d retries: a wait past the deadline is not begun", n, retries)
			}
		})
	}

	t.Run("a cancelled context ends the wait with its error", func(t *testing.T) {
		c, _ := stubAnswers(t, problem(429, "RATE_LIMITED", "3600"))
		ctx, cancel := context.WithCancel(context.Background())
		p := fastRetries
		p.MaxElapsed = 2 * time.Hour
		p.OnRetry = func(error, time.Duration) { cancel() }
		_, err := verify(ctx, c, p)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	})
}

// TestRetryAfterIsWaited: the wait before a retry is the server's
// Retry-After (seconds or an HTTP-date), with a little jitter on top.
func TestRetryAfterIsWaited(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"0", 0, true},
		{"2", 2 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"Friday, 04-Dec-26 18:00:30 GMT", 30 * time.Second, true}, // RFC 850, which HTTP-date admits
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	} {
		got, ok := parseRetryAfter(tc.header, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Retry-After %q: %s %v, want %s %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}

	c, _ := stubAnswers(t, problem(429, "RATE_LIMITED", "1"), accepted)
	var waits []time.Duration
	p := fastRetries
	p.OnRetry = func(_ error, wait time.Duration) { waits = append(waits, wait) }
	res, err := verify(context.Background(), c, p)
	if err != nil || res.StatusCode() != http.StatusAccepted {
		t.Fatalf("%v %v: want 202 after the wait", err, res)
	}
	if len(waits) != 1 || waits[0] < time.Second || waits[0] > time.Second+p.InitialInterval {
		t.Errorf("waits %v: want one of Retry-After (1s) plus at most InitialInterval of jitter", waits)
	}
}
