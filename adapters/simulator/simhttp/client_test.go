package simhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// answering is a server that always answers status with body.
func answering(t *testing.T, status int, header, body string) *simhttp.Client {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if header != "" {
			k, v, _ := strings.Cut(header, ": ")
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	c, err := simhttp.NewClient(simhttp.ClientConfig{URL: ts.URL, Timeout: 5 * time.Second})
	require.NoError(t, err)
	return c
}

// Answers are sorted as the workers need: transient (retry with the same
// token) or the system's permanent verdict.
func TestSimClientClassifiesAnswers(t *testing.T) {
	for _, c := range []struct {
		name, header, body string
		status             int
		code               domain.Code
		resourceID         string
		retryAfter         time.Duration
	}{
		{"unavailable", "Retry-After: 7", `{"code":"UNAVAILABLE","message":"down"}`, 503, domain.CodeUnavailable, "", 7 * time.Second},
		{"internal error", "", `{"code":"INTERNAL"}`, 500, domain.CodeUnavailable, "", 0},
		{"bad gateway, no body", "", "", 502, domain.CodeUnavailable, "", 0},
		{"rate limited", "", "slow down", 429, domain.CodeUnavailable, "", 0},
		{"request timeout", "", "", 408, domain.CodeUnavailable, "", 0},
		{"validation", "", `{"code":"VALIDATION_FAILED","message":"bad title"}`, 422, domain.CodeValidation, "", 0},
		{"forbidden", "", `{"code":"FORBIDDEN"}`, 403, domain.CodeForbidden, "", 0},
		{"unauthorized, no code", "", "", 401, domain.CodeForbidden, "", 0},
		{"not found", "", "", 404, domain.CodeNotFound, "", 0},
		{"conflict", "", `{"code":"CONFLICT","resource_id":"lst_000001"}`, 409, domain.CodeConflict, "lst_000001", 0},
		{"a 4xx claiming to be transient is still permanent", "", `{"code":"UNAVAILABLE"}`, 400, domain.CodeValidation, "", 0},
		{"a 2xx that cannot be read", "", "<html>", 200, domain.CodeUnavailable, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := answering(t, c.status, c.header, c.body)
			_, err := client.CreateListing(context.Background(), listing("pub-1", "Mug"))
			var de *domain.Error
			require.True(t, errors.As(err, &de), "%v", err)
			assert.Equal(t, c.code, de.Code)
			assert.Equal(t, c.resourceID, de.ResourceID)
			assert.Equal(t, c.retryAfter, de.RetryAfter)
			assert.NotEmpty(t, de.Message)
			assert.Equal(t, c.code == domain.CodeUnavailable, platformerr.Retryable(context.Background(), err))
			assert.NotContains(t, err.Error(), shopCreds.APISecret)
		})
	}
}

// A 429 is a Throttled with the wait the answer asked for (none if it did
// not say): transient, and told apart from an outage.
func TestSimClientTurnsA429IntoThrottled(t *testing.T) {
	for header, want := range map[string]time.Duration{"Retry-After: 3": 3 * time.Second, "": 0} {
		_, err := answering(t, 429, header, `{"code":"RATE_LIMITED","message":"slow down"}`).
			CreateListing(context.Background(), listing("pub-1", "Mug"))
		wait, throttled := platformerr.ThrottledFor(err)
		require.True(t, throttled, "%v", err)
		assert.Equal(t, want, wait, header)
		assert.True(t, platformerr.Retryable(context.Background(), err))
		assert.ErrorContains(t, err, "slow down")
	}
}

// A server that cannot be reached, or cuts the answer, is transient; the
// error names neither the URL (with its userinfo) nor a credential.
func TestSimClientTransportFailuresAreTransient(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	refused, err := simhttp.NewClient(simhttp.ClientConfig{URL: strings.Replace(gone.URL, "http://", "http://user:pw_secret@", 1)})
	require.NoError(t, err)

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"external_listing_id":`)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(cut.Close)
	cutting, err := simhttp.NewClient(simhttp.ClientConfig{URL: cut.URL})
	require.NoError(t, err)

	for name, c := range map[string]*simhttp.Client{"refused": refused, "cut": cutting} {
		_, err := c.CreateListing(context.Background(), listing("pub-1", "Mug"))
		assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%s: %v", name, err)
		assert.True(t, platformerr.Retryable(context.Background(), err), name)
		for _, secret := range []string{"pw_secret", shopCreds.APISecret, "/platform/listings"} {
			assert.NotContains(t, err.Error(), secret, name)
		}
	}
}

// A call that outlives the client's timeout is transient; the platform
// may still act (a held call goes on once released), and the retry with
// the same token gets that outcome without a second effect.
func TestSimClientTimeoutThenRetryWithTheSameToken(t *testing.T) {
	s := startSim(t, "")
	s.inject(t, simhttp.Fault{Kind: simhttp.KindListing, Action: simhttp.ActionHold})
	impatient := s.client(t, 100*time.Millisecond)
	_, err := impatient.CreateListing(context.Background(), listing("pub-slow", "Mug"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, platformerr.Retryable(context.Background(), err))

	held := s.waitHeld(t, 1)
	assert.Equal(t, "pub-slow", held[0].Token)
	assert.Equal(t, simhttp.KindListing, held[0].Kind)
	assert.Zero(t, s.effects(t, "pub-slow"), "held before the platform acts")
	n, err := s.admin.Release(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	require.Eventually(t, func() bool { return s.effects(t, "pub-slow") == 1 }, 10*time.Second, 5*time.Millisecond,
		"the released call acts though its caller left")

	res, err := s.client(t, 5*time.Second).CreateListing(context.Background(), listing("pub-slow", "Mug"))
	require.NoError(t, err)
	assert.NotEmpty(t, res.ExternalListingID)
	assert.Equal(t, 1, s.effects(t, "pub-slow"))

	// The caller's own context ends the call the same way.
	s.inject(t, simhttp.Fault{Action: simhttp.ActionHold})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	patient := s.client(t, time.Minute)
	go func() {
		_, err := patient.Generate(ctx, ports.AIRequest{RequestToken: "ai-1", Kind: model.AIText, Title: "Mug"})
		done <- err
	}()
	s.waitHeld(t, 1)
	cancel()
	err = <-done
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	assert.True(t, platformerr.Retryable(ctx, err))
}

// The request token travels as the Idempotency-Key header and the shop's
// credentials in headers of their own, never in the body.
func TestSimClientSendsTheTokenAsIdempotencyKey(t *testing.T) {
	var got *http.Request
	var body []byte
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, `{"external_listing_id":"lst_1"}`)
	}))
	t.Cleanup(ts.Close)
	c, err := simhttp.NewClient(simhttp.ClientConfig{URL: ts.URL + "/"})
	require.NoError(t, err)
	res, err := c.CreateListing(context.Background(), listing("pub-7", "Mug"))
	require.NoError(t, err)
	assert.Equal(t, "lst_1", res.ExternalListingID)
	assert.Equal(t, simhttp.PathListings, got.URL.Path)
	assert.Equal(t, "pub-7", got.Header.Get(simhttp.HeaderIdempotencyKey))
	assert.Equal(t, shopCreds.APIKey, got.Header.Get(simhttp.HeaderAPIKey))
	assert.Equal(t, shopCreds.APISecret, got.Header.Get(simhttp.HeaderAPISecret))
	assert.NotContains(t, string(body), shopCreds.APISecret)
	assert.Contains(t, string(body), `"title":"Mug"`)
}

func TestSimClientRefusesABadConfiguration(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8090", "ftp://host", "http://"} {
		_, err := simhttp.NewClient(simhttp.ClientConfig{URL: u})
		assert.Error(t, err, u)
	}
	_, err := simhttp.NewClient(simhttp.ClientConfig{URL: "http://127.0.0.1:1", Timeout: -time.Second})
	assert.Error(t, err)
}
