package app_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
	"github.com/oncehq/once/testsupport/pgtest"
)

// poolRole is a login role of its own for the service under test, so the
// test can count (and end) exactly the service's connections, and so
// PostgreSQL itself refuses a connection beyond limit (CONNECTION LIMIT
// answers 53300, which the service turns into a 503): a pool that ever
// opened more than it may would fail the request that needed it.
type poolRole struct {
	name  string
	dsn   string
	super *sql.DB
}

func newPoolRole(t *testing.T, db *pgtest.DB, limit int) *poolRole {
	t.Helper()
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	r := &poolRole{name: db.AppRole + "_pool", super: super}
	_, err = super.Exec(fmt.Sprintf(`CREATE ROLE %s LOGIN CONNECTION LIMIT %d IN ROLE once_app, once_dispatcher`,
		pgx.Identifier{r.name}.Sanitize(), limit))
	require.NoError(t, err)
	// Registered before the server starts, so it runs after the server
	// stopped; the sandbox drops the database after that.
	t.Cleanup(func() {
		if _, err := super.Exec(`DROP ROLE IF EXISTS ` + pgx.Identifier{r.name}.Sanitize()); err != nil {
			t.Errorf("drop role %s: %v", r.name, err)
		}
	})
	u, err := url.Parse(db.AppDSN)
	require.NoError(t, err)
	u.User = url.User(r.name)
	r.dsn = u.String()
	return r
}

// backends counts the role's sessions.
func (r *poolRole) backends(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, r.super.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, r.name).Scan(&n))
	return n
}

// A storm of concurrent requests never makes one process open more
// connections than its pool plus the Dispatcher's LISTEN connection: the
// role's CONNECTION LIMIT is exactly that, so one more connection would
// have been refused and shown up as a 503; a sampler watches
// pg_stat_activity besides. The in-process Dispatcher runs, claiming the
// events the burst commits, as in `once serve`.
func TestPostgresBurstStaysWithinThePool(t *testing.T) {
	const pool, listener = 4, 1
	db := pgtest.New(t)
	role := newPoolRole(t, db, pool+listener)
	cfg := apitest.Config(role.dsn)
	cfg.DBMaxConns, cfg.DBMaxIdle = pool, pool
	cfg.Dispatcher = true
	s := apitest.Start(t, cfg, db)

	stop := make(chan struct{})
	var peak atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), int64(role.backends(t))))
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond): // sample, do not spin
			}
		}
	}()

	const n = 150
	storm := key()
	statuses := make([]int, n)
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-begin
			switch i % 3 {
			case 0: // one key, one body: the retry storm
				statuses[i] = s.Do(t, "POST", "/v1/stores", storeBody("shop-storm"), map[string]string{"Idempotency-Key": storm}).Status
			case 1: // fresh requests
				statuses[i] = s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprintf("shop-%d", i)), map[string]string{"Idempotency-Key": key()}).Status
			default: // reads
				statuses[i] = s.Do(t, "GET", "/v1/operations", nil, nil).Status
			}
		})
	}
	close(begin)
	wg.Wait()
	close(stop)
	<-sampled

	counts := map[int]int{}
	for _, status := range statuses {
		counts[status]++
	}
	t.Logf("answers by status: %v; peak backends: %d (pool %d + listener %d)", counts, peak.Load(), pool, listener)
	for status := range counts {
		assert.Contains(t, []int{http.StatusOK, http.StatusCreated, http.StatusConflict}, status,
			"a 5xx here means the process asked for more connections than the role may have")
	}
	assert.LessOrEqual(t, peak.Load(), int64(pool+listener))
	assert.Equal(t, 1+n/3, s.CountRows(t, "stores"), "one store for the storm, one per fresh request")
}

// A saturated pool answers at once: with both connections of a pool of two
// held inside open transactions, the next request gets 503 UNAVAILABLE with
// Retry-After while they are still held, instead of queueing behind them.
func TestPostgresSaturatedPoolAnswers503(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.DBMaxConns, cfg.DBMaxIdle = 2, 2
	cfg.DBAcquireTimeout = 50 * time.Millisecond
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	s := apitest.Start(t, cfg, db, apitest.WithBeforeAppend(func(ctx context.Context, _ []model.OutboxEvent) error {
		entered <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	t.Cleanup(open) // runs before the server stops, which waits for them

	held := make(chan apitest.Response, 2)
	for i := range 2 {
		go func() {
			// The background loops of the server use the pool too: a held
			// request that found it busy got 503 and is sent again (the
			// same key), until it holds a connection of its own.
			k := key()
			for {
				r := s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprintf("shop-held-%d", i)), map[string]string{"Idempotency-Key": k})
				if r.Status != http.StatusServiceUnavailable {
					held <- r
					return
				}
			}
		}()
	}
	for range 2 {
		select {
		case <-entered:
		case r := <-held:
			t.Fatalf("a held request finished before it held its connection: %d %s", r.Status, r.Body)
		}
	}
	// both connections are inside a transaction now

	// The held requests are released only after these answered, so a pool
	// that waited for a connection would not answer before the deadline,
	// however fast the machine; the deadline only ends a failing run.
	k := key()
	probes := make(chan []apitest.Response, 1)
	go func() {
		probes <- []apitest.Response{
			s.Do(t, "GET", "/v1/operations", nil, nil),
			s.Do(t, "POST", "/v1/stores", storeBody("shop-waiting"), map[string]string{"Idempotency-Key": k}),
		}
	}()
	var answers []apitest.Response
	select {
	case answers = <-probes:
	case <-time.After(30 * time.Second):
		t.Fatal("a request waited for the held connections instead of answering 503")
	}
	for _, r := range answers {
		require.Equal(t, http.StatusServiceUnavailable, r.Status, string(r.Body))
		p := r.Problem(t)
		assert.Equal(t, "UNAVAILABLE", p.Code)
		assert.True(t, p.RetrySameKey)
		assert.Equal(t, "1", r.Header.Get("Retry-After"))
		assert.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	}
	select {
	case r := <-held:
		t.Fatalf("a held request finished before it was released: %d %s", r.Status, r.Body)
	default: // the 503s came while both were held: nobody waited on them
	}

	open()
	for range 2 {
		r := <-held
		assert.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	}
	// The refused request saved nothing: its retry with the same key runs.
	retry := s.Do(t, "POST", "/v1/stores", storeBody("shop-waiting"), map[string]string{"Idempotency-Key": k})
	require.Equal(t, http.StatusCreated, retry.Status, string(retry.Body))
	assert.Empty(t, retry.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, 3, s.CountRows(t, "stores"))
}

// PostgreSQL ending every session of the service (what a restart or an
// administrator does: 57P01) costs the clients nothing once it is back:
// the pool drops the dead connections and opens new ones by itself.
func TestPostgresPoolRecoversWhenSessionsAreTerminated(t *testing.T) {
	const pool = 4
	db := pgtest.New(t)
	role := newPoolRole(t, db, pool)
	cfg := apitest.Config(role.dsn)
	cfg.DBMaxConns, cfg.DBMaxIdle = pool, pool
	s := apitest.Start(t, cfg, db)

	// Open every connection of the pool.
	var wg sync.WaitGroup
	for range 4 * pool {
		wg.Go(func() { s.Do(t, "GET", "/v1/operations", nil, nil) })
	}
	wg.Wait()
	require.Positive(t, role.backends(t))

	_, err := role.super.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, role.name)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return role.backends(t) == 0 }, 30*time.Second, 20*time.Millisecond,
		"the terminated sessions did not end")

	for i := range 2 * pool {
		r := s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprintf("shop-after-%d", i)), map[string]string{"Idempotency-Key": key()})
		require.Equal(t, http.StatusCreated, r.Status, "request %d after the sessions ended: %s", i, r.Body)
	}
}

// PostgreSQL unreachable (a network cut through a proxy: refused
// connections, cut streams): 503 UNAVAILABLE with Retry-After and
// retry_same_key, never a 500; once it is reachable again the same request
// with the same key succeeds, with no restart of the service.
func TestPostgresOutageAnswers503AndRecovers(t *testing.T) {
	db := pgtest.New(t)
	u, err := url.Parse(db.AppDSN)
	require.NoError(t, err)
	proxy := faultproxy.Start(t, u.Host)
	u.Host = proxy.Addr()
	cfg := apitest.Config(u.String())
	cfg.DBAcquireTimeout = 5 * time.Second
	s := apitest.Start(t, cfg, db)
	require.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/operations", nil, nil).Status)

	proxy.Down()
	k := key()
	for _, r := range []apitest.Response{
		s.Do(t, "POST", "/v1/stores", storeBody("shop-outage"), map[string]string{"Idempotency-Key": k}),
		s.Do(t, "POST", "/v1/stores", storeBody("shop-outage"), map[string]string{"Idempotency-Key": k}),
	} {
		require.Equal(t, http.StatusServiceUnavailable, r.Status, string(r.Body))
		p := r.Problem(t)
		assert.Equal(t, "UNAVAILABLE", p.Code)
		assert.True(t, p.RetrySameKey)
		assert.Equal(t, "1", r.Header.Get("Retry-After"))
	}

	proxy.Up(t)
	r := s.Do(t, "POST", "/v1/stores", storeBody("shop-outage"), map[string]string{"Idempotency-Key": k})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	assert.Empty(t, r.Header.Get("Idempotent-Replayed"), "nothing was saved during the outage")
	assert.Equal(t, 1, s.CountRows(t, "stores"))
}
