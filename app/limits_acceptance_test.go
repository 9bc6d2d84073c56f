package app_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/redisrate"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
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

// Over its cap of concurrent work a workspace's requests wait their turn
// and are served when a slot comes back; with its queue full (four times
// the cap) they are refused at once, idempotent writes and reads alike,
// while another workspace is served.
func TestAWorkspaceOverItsCapWaitsItsTurnAndIsRefusedWhenItsQueueIsFull(t *testing.T) {
	s, lim, open, held := oneSlotHeld(t)

	// Four wait: a read, and three creates.
	waiters := make(chan int, limits.WaitingPerSlot)
	want := map[int]int{http.StatusOK: 1, http.StatusCreated: limits.WaitingPerSlot - 1}
	go func() { waiters <- s.Do(t, "GET", "/v1/operations", nil, nil).Status }()
	for i := 1; i < limits.WaitingPerSlot; i++ {
		apitest.Eventually(t, time.Minute, "queued", func() bool { return lim.Admission().Waiting(s.Workspace) == i })
		go func() {
			waiters <- s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprint("waiting-", i)), map[string]string{"Idempotency-Key": key()}).Status
		}()
	}
	apitest.Eventually(t, time.Minute, "queue full", func() bool { return lim.Admission().Waiting(s.Workspace) == limits.WaitingPerSlot })

	asserts429(t, s.Do(t, "POST", "/v1/stores", storeBody("next"), map[string]string{"Idempotency-Key": key()}), "concurrency")
	r := s.Do(t, "GET", "/v1/operations", nil, nil)
	asserts429(t, r, "concurrency")
	assert.Equal(t, `"concurrency";q=1;qu="concurrent-requests"`, r.Header.Get("RateLimit-Policy"))

	other := otherWorkspace(t, s)
	assert.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/operations", nil, map[string]string{"Authorization": "Bearer " + other}).Status)

	open()
	assert.Equal(t, http.StatusCreated, <-held)
	got := map[int]int{}
	for range limits.WaitingPerSlot {
		got[<-waiters]++
	}
	assert.Equal(t, want, got, "every waiting request was served in its turn")
	assert.Zero(t, lim.Admission().InFlight(s.Workspace))
	assert.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/operations", nil, nil).Status, "the slots are back")

	metrics := s.Metrics(t)
	assert.Contains(t, metrics, fmt.Sprintf(`once_http_limit_checks_total{outcome="waited",policy="concurrency"} %d`, limits.WaitingPerSlot))
	assert.Contains(t, metrics, `once_http_limit_checks_total{outcome="limited",policy="concurrency"} 2`)
}

// withDefaults is cfg with what the harness changes set back to the
// service's defaults where they decide who is served: the pool, the
// limits, and the Dispatcher, worker and relay that share the pool.
func withDefaults(cfg app.Config) app.Config {
	def := app.DefaultConfig()
	cfg.DBMaxConns, cfg.DBMaxIdle, cfg.DBAcquireTimeout = def.DBMaxConns, def.DBMaxIdle, def.DBAcquireTimeout
	cfg.RateLimit, cfg.RateLimitWorkspaces, cfg.RateLimitStore, cfg.RateLimitTimeout = def.RateLimit, def.RateLimitWorkspaces, def.RateLimitStore, def.RateLimitTimeout
	cfg.WorkspaceMaxConcurrency, cfg.WorkspaceQueueTimeout = def.WorkspaceMaxConcurrency, def.WorkspaceQueueTimeout
	cfg.Dispatcher, cfg.Worker, cfg.Relay, cfg.Queue = def.Dispatcher, def.Worker, def.Relay, def.Queue
	return cfg
}

// forgetRate removes workspace's allowance from the shared Redis the
// defaults meter in.
func forgetRate(t *testing.T, redisURL string, workspace uuid.UUID) {
	t.Helper()
	opts, err := redis.ParseURL(redisURL)
	require.NoError(t, err)
	client := redis.NewClient(opts)
	t.Cleanup(func() {
		assert.NoError(t, client.Del(context.Background(), "rate:"+redisrate.Key(workspace)).Err())
		_ = client.Close()
	})
}

// A client with a small thread pool is not a storm: on PostgreSQL with
// every setting that decides it at its default, 100 store creates from 16
// threads at once all answer 201. Past the workspace's cap (half the
// pool) they wait their turn for a moment instead of being turned away.
func TestSixteenThreadsOfOneClientAreServedWithTheDefaults(t *testing.T) {
	db := pgtest.New(t)
	cfg := withDefaults(apitest.Config(db.AppDSN))
	s := apitest.Start(t, cfg, db)
	forgetRate(t, cfg.RedisURL, s.Workspace)

	const threads, creates = 16, 100
	next := make(chan int, creates)
	for i := range creates {
		next <- i
	}
	close(next)
	var mu sync.Mutex
	answers := map[int]int{}
	var wg sync.WaitGroup
	for range threads {
		wg.Go(func() {
			for i := range next {
				r := s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprint("sixteen-", i)), map[string]string{"Idempotency-Key": key()})
				if r.Status != http.StatusCreated {
					t.Logf("create %d: %d %s", i, r.Status, r.Body)
				}
				mu.Lock()
				answers[r.Status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	metrics := s.Metrics(t)
	waited := regexp.MustCompile(`once_http_limit_checks_total\{outcome="waited",policy="concurrency"\} \d+`).FindString(metrics)
	t.Logf("answers %v; %s", answers, waited)
	assert.Equal(t, map[int]int{http.StatusCreated: creates}, answers)
}

// A storm of 1,000 creates at once from one workspace, on PostgreSQL with
// the defaults: each is answered 201 or refused with a time to come back
// (429, or 503 UNAVAILABLE where the pool sheds it), none 500, and another
// workspace's requests meanwhile are all served. The storm holds its half
// of the pool and a queue four times that deep; the rest is refused at
// once or after a short wait.
func TestAStormFromOneWorkspaceLeavesAnotherServedWithTheDefaults(t *testing.T) {
	db := pgtest.New(t)
	cfg := withDefaults(apitest.Config(db.AppDSN))
	s := apitest.Start(t, cfg, db)
	forgetRate(t, cfg.RedisURL, s.Workspace)
	ws, user := uuid.New(), uuid.New()
	_, err := s.WS.Create(context.Background(), ws, "quiet", user)
	require.NoError(t, err)
	forgetRate(t, cfg.RedisURL, ws)
	quiet := map[string]string{"Authorization": "Bearer " + s.TokenFor(t, ws, user)}

	const storm = 1000
	var mu sync.Mutex
	stormed, served := map[int]int{}, map[int]int{}
	count := func(m map[int]int, status int) {
		mu.Lock()
		m[status]++
		mu.Unlock()
	}
	start := make(chan struct{})
	var storming, quietWG sync.WaitGroup
	for i := range storm {
		storming.Go(func() {
			<-start
			r := s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprint("storm-", i)), map[string]string{"Idempotency-Key": key()})
			if r.Status == http.StatusServiceUnavailable {
				// The pool's acquire timeout shed it, as it sheds any
				// overload: a "try again" like 429, never a failure.
				var p struct {
					Code         string
					RetrySameKey bool `json:"retry_same_key"`
				}
				r.JSON(t, &p)
				assert.Equal(t, "UNAVAILABLE", p.Code, "%s", r.Body)
				assert.True(t, p.RetrySameKey, "a 503 says the same request may be sent again: %s", r.Body)
			}
			count(stormed, r.Status)
		})
	}
	close(start)
	// The quiet workspace, while the storm lasts: creates and reads from
	// a few threads.
	stormOver := make(chan struct{})
	go func() { storming.Wait(); close(stormOver) }()
	for range 4 {
		quietWG.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stormOver:
					return
				default:
				}
				// A 503 (the pool's acquire timeout, on a machine too
				// loaded to serve anyone within it) is sent again with the
				// same key, as it says and as a client does; what must
				// not happen is a 429 or a failure for the quiet one.
				create := map[string]string{"Idempotency-Key": key(), "Authorization": quiet["Authorization"]}
				body := storeBody(fmt.Sprint("quiet-", uuid.NewString()[:8]))
				count(served, untilNot503(func() int { return s.Do(t, "POST", "/v1/stores", body, create).Status }))
				count(served, untilNot503(func() int { return s.Do(t, "GET", "/v1/operations", nil, quiet).Status }))
			}
		})
	}
	<-stormOver
	quietWG.Wait()
	t.Logf("storm %v; quiet workspace %v", stormed, served)

	// On a loaded machine the storm's queue can outlast the pool's acquire
	// timeout, so a few of its requests may be 503 with Retry-After: both
	// refusals tell the client to come back, and neither is a 500.
	assert.Equal(t, storm, stormed[http.StatusCreated]+stormed[http.StatusTooManyRequests]+stormed[http.StatusServiceUnavailable],
		"the storm gets 201, 429 or 503: %v", stormed)
	assert.Positive(t, stormed[http.StatusTooManyRequests], "the storm is limited")
	assert.Positive(t, served[http.StatusCreated])
	assert.Equal(t, map[int]int{http.StatusCreated: served[http.StatusCreated], http.StatusOK: served[http.StatusOK]}, served,
		"every request of the quiet workspace is served")
}

// untilNot503 is the status of do, sent again while it answers 503 (at
// most 20 times, then that 503): the retry a client makes when told to.
func untilNot503(do func() int) int {
	status := do()
	for range 20 {
		if status != http.StatusServiceUnavailable {
			break
		}
		status = do()
	}
	return status
}

// A request that must look a host up (a material transfer's sources)
// does so only once the workspace's limits admit it, and a replay of its
// key looks nothing up again: a member cannot drive look-ups of names it
// chooses faster than its limits let its requests through.
func TestHostLookUpsComeAfterAdmissionAndAReplayRepeatsNone(t *testing.T) {
	s, lim, open, held := oneSlotHeld(t)
	s.Resolver.Set("cdn.supplier.example", "93.184.215.14")

	transfer := map[string]any{"source_urls": []string{"https://cdn.supplier.example/a.png"}}
	headers := map[string]string{"Idempotency-Key": key()}
	started := make(chan int, 1)
	go func() { started <- s.Do(t, "POST", "/v1/material-transfers", transfer, headers).Status }()
	apitest.Eventually(t, time.Minute, "the transfer waits for a slot", func() bool { return lim.Admission().Waiting(s.Workspace) == 1 })
	assert.Empty(t, s.Resolver.Lookups(), "no look-up before the workspace's limits admit the request")

	open()
	require.Equal(t, http.StatusCreated, <-held)
	require.Equal(t, http.StatusAccepted, <-started)
	require.Equal(t, []string{"cdn.supplier.example"}, s.Resolver.Lookups())
	replay := s.Do(t, "POST", "/v1/material-transfers", transfer, headers)
	require.Equal(t, http.StatusAccepted, replay.Status)
	assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, []string{"cdn.supplier.example"}, s.Resolver.Lookups(), "a replay looks nothing up again")
}

// oneSlotHeld starts a server whose workspaces have one slot of
// concurrent work each (waits never run out) and takes the test
// workspace's slot with a store create held inside its transaction. open
// lets it finish (also at cleanup, before the server stops, which waits
// for it); held gets its status.
func oneSlotHeld(t *testing.T) (s *apitest.Server, lim *limits.Limits, open func(), held <-chan int) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s = limited(t, func(c *app.Config) {
		c.WorkspaceMaxConcurrency = "1"
		c.WorkspaceQueueTimeout = time.Minute // nobody's wait runs out here
	},
		fx.Populate(&lim),
		apitest.WithBeforeAppend(func(ctx context.Context, events []model.OutboxEvent) error {
			if len(events) > 0 && events[0].Type == model.EventStoreCredentialsVerify {
				once.Do(func() { close(entered) })
				<-release
			}
			return nil
		}))
	var releaseOnce sync.Once
	open = func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open)
	status := make(chan int, 1)
	go func() {
		status <- s.Do(t, "POST", "/v1/stores", storeBody("held"), map[string]string{"Idempotency-Key": key()}).Status
	}()
	select { // the workspace's one slot is taken, inside its transaction
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the held request never reached its transaction")
	}
	return s, lim, open, status
}
