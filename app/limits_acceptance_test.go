package app_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

// limited starts the service on the memory adapters with cfg's limits
// changed by set.
func limited(t *testing.T, set func(*app.Config), opts ...fx.Option) *apitest.Server {
	t.Helper()
	cfg := apitest.Config("")
	set(&cfg)
	return apitest.Start(t, cfg, nil, opts...)
}

// otherWorkspace creates a second workspace and returns a token of its
// admin.
func otherWorkspace(t *testing.T, s *apitest.Server) string {
	t.Helper()
	ws, user := uuid.New(), uuid.New()
	_, err := s.WS.Create(context.Background(), ws, "other", user)
	require.NoError(t, err)
	return s.TokenFor(t, ws, user)
}

func asserts429(t *testing.T, r apitest.Response, policy string) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	p := r.Problem(t)
	assert.Equal(t, "RATE_LIMITED", p.Code)
	assert.True(t, p.RetrySameKey)
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", r.Header.Get("Retry-After"))
	assert.Positive(t, secs)
	assert.True(t, strings.HasPrefix(r.Header.Get("RateLimit-Policy"), `"`+policy+`";q=`), r.Header.Get("RateLimit-Policy"))
	assert.Equal(t, fmt.Sprintf(`"%s";r=0;t=%d`, policy, secs), r.Header.Get("RateLimit"))
}

// Over its rate a workspace gets 429 with Retry-After and the RateLimit
// headers, on idempotent and other writes alike; replays of its completed
// keys and its reads are not charged, and another workspace is not
// charged for it.
func TestAWorkspaceOverItsRateIsRefusedAndOnlyItsExecutionsCount(t *testing.T) {
	s := limited(t, func(c *app.Config) { c.RateLimit = "2/h" }) // 30 minutes apart: nothing comes back during the test
	first := key()
	require.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/stores", storeBody("a"), map[string]string{"Idempotency-Key": first}).Status)
	require.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/products", map[string]any{"title": "Mug", "price_minor": 900, "currency": "EUR"}, nil).Status)

	over := s.Do(t, "POST", "/v1/stores", storeBody("b"), map[string]string{"Idempotency-Key": key()})
	asserts429(t, over, "writes")
	assert.Equal(t, `"writes";q=2;w=3600;once-burst=2`, over.Header.Get("RateLimit-Policy"))
	asserts429(t, s.Do(t, "POST", "/v1/products", map[string]any{"title": "Cup", "price_minor": 900, "currency": "EUR"}, nil), "writes")

	for range 5 {
		replay := s.Do(t, "POST", "/v1/stores", storeBody("a"), map[string]string{"Idempotency-Key": first})
		require.Equal(t, http.StatusCreated, replay.Status, "a replay is answered whatever the rate: %s", replay.Body)
		assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	}
	assert.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/operations", nil, nil).Status, "reads are not charged")

	other := otherWorkspace(t, s)
	assert.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/stores", storeBody("a"),
		map[string]string{"Idempotency-Key": key(), "Authorization": "Bearer " + other}).Status)

	metrics := s.Metrics(t)
	assert.Contains(t, metrics, `once_http_limit_checks_total{outcome="limited",policy="writes"} 2`)
	assert.Contains(t, metrics, `once_http_limit_checks_total{outcome="allowed",policy="writes"} 3`)
}

// A workspace with a rate of its own gets it; one set off is not limited.
func TestAWorkspaceOverrideReplacesTheDefault(t *testing.T) {
	var s *apitest.Server
	wsFree := uuid.New()
	s = limited(t, func(c *app.Config) {
		c.RateLimit = "1/h"
		c.RateLimitWorkspaces = wsFree.String() + "=off"
	})
	user := uuid.New()
	_, err := s.WS.Create(context.Background(), wsFree, "free", user)
	require.NoError(t, err)
	token := "Bearer " + s.TokenFor(t, wsFree, user)
	for i := range 5 {
		assert.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprint(i)),
			map[string]string{"Idempotency-Key": key(), "Authorization": token}).Status)
	}
	require.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/stores", storeBody("x"), map[string]string{"Idempotency-Key": key()}).Status)
	asserts429(t, s.Do(t, "POST", "/v1/stores", storeBody("y"), map[string]string{"Idempotency-Key": key()}), "writes")
}

// An unreachable rate limiter lets writes through: an outage of Redis is
// never an outage of the API. It is logged and counted.
func TestWritesGoThroughWhenTheRateLimiterIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nobody listens there now
	s := limited(t, func(c *app.Config) {
		c.RateLimit = "1/h"
		c.RateLimitStore = app.RateLimitStoreRedis
		c.RedisURL = "redis://" + addr + "/0"
	})
	for i := range 3 {
		r := s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprint(i)), map[string]string{"Idempotency-Key": key()})
		assert.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	}
	assert.Contains(t, s.Metrics(t), `once_http_limit_checks_total{outcome="unmetered",policy="writes"} 3`)
	assert.Equal(t, 1, strings.Count(s.Logs.String(), "rate limiter unavailable"), "one line per outage")
}

// Over its cap of concurrent work a workspace is refused at once, on
// idempotent writes and reads alike, while another workspace is served.
func TestAWorkspaceOverItsCapOfConcurrentWorkIsRefusedAtOnce(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	s := limited(t, func(c *app.Config) { c.WorkspaceMaxConcurrency = "1" },
		apitest.WithBeforeAppend(func(ctx context.Context, events []model.OutboxEvent) error {
			if len(events) > 0 && events[0].Type == model.EventStoreCredentialsVerify {
				once.Do(func() { close(entered) })
				<-release
			}
			return nil
		}))
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open) // before the server stops, which waits for the held request
	held := make(chan int, 1)
	go func() {
		held <- s.Do(t, "POST", "/v1/stores", storeBody("held"), map[string]string{"Idempotency-Key": key()}).Status
	}()
	select { // the workspace's one slot is taken, inside its transaction
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the held request never reached its transaction")
	}

	asserts429(t, s.Do(t, "POST", "/v1/stores", storeBody("next"), map[string]string{"Idempotency-Key": key()}), "concurrency")
	r := s.Do(t, "GET", "/v1/operations", nil, nil)
	asserts429(t, r, "concurrency")
	assert.Equal(t, `"concurrency";q=1;qu="concurrent-requests"`, r.Header.Get("RateLimit-Policy"))

	other := otherWorkspace(t, s)
	assert.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/operations", nil, map[string]string{"Authorization": "Bearer " + other}).Status)

	open()
	assert.Equal(t, http.StatusCreated, <-held)
	assert.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/operations", nil, nil).Status, "the slot is back")
}
