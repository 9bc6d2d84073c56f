package app_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgbouncer"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
	"github.com/oncehq/once/testsupport/pgtest"
)

// PgBouncer in transaction mode in front, with fewer server connections
// than the service has client connections, and ONCE_DATABASE_POOLER left
// empty: the service finds the pooler at start, says so in one warning
// naming the setting, and works as with it. Creates from eight clients at
// once and their replays all answer 2xx (never a 500 for a prepared
// statement the next transaction's server connection does not have), the
// Dispatcher's claims and marks and the worker's writes go through it too
// (every operation succeeds), and the service is ready.
func TestBehindPgBouncerWithoutTheSettingTheServiceFindsThePooler(t *testing.T) {
	behindPgBouncerEveryRequestWorks(t, "")
}

// The same with ONCE_DATABASE_POOLER=none, which says that the pooler
// keeps prepared statements: Debian's PgBouncer (1.18) does not, the
// service finds that out at start, and sends statements unprepared with
// one warning naming ONCE_DATABASE_POOLER=pgbouncer.
func TestBehindPgBouncerWithNoneThatDropsPreparedStatementsTheServiceAdapts(t *testing.T) {
	behindPgBouncerEveryRequestWorks(t, app.PoolerNone)
}

func behindPgBouncerEveryRequestWorks(t *testing.T, setting string) {
	db := pgtest.New(t)
	bouncer := pgbouncer.Start(t, pgbouncer.Config{Target: "127.0.0.1:5432", Users: []string{db.AppRole}, PoolSize: 2})
	cfg := apitest.Config(bouncer.DSN(t, db.AppDSN))
	cfg.DatabasePooler = setting
	cfg.DBMaxConns, cfg.DBMaxIdle = 6, 6
	cfg.Dispatcher, cfg.Worker = true, true
	// The Dispatcher polls: its LISTEN would go through the pooler, which
	// passes on no notification.
	cfg.DispatchPollInterval = 50 * time.Millisecond
	s := apitest.Start(t, cfg, db)

	const clients, each = 8, 5
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		answers  []string
		ops      []storeCreated
		wg       sync.WaitGroup
	)
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				k := key()
				body := storeBody(fmt.Sprintf("pooler-%d-%d", c, i))
				first := s.Do(t, "POST", "/v1/stores", body, map[string]string{"Idempotency-Key": k})
				replay := s.Do(t, "POST", "/v1/stores", body, map[string]string{"Idempotency-Key": k})
				mu.Lock()
				for _, r := range []apitest.Response{first, replay} {
					statuses[r.Status]++
					if r.Status != http.StatusCreated {
						answers = append(answers, fmt.Sprintf("%d %.300s", r.Status, r.Body))
					}
				}
				if first.Status == http.StatusCreated {
					var created storeCreated
					first.JSON(t, &created)
					ops = append(ops, created)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, map[int]int{http.StatusCreated: 2 * clients * each}, statuses, "answers other than 201: %v", answers)
	for _, c := range ops {
		op := s.WaitOperation(t, c.Operation.ID, time.Minute)
		assert.Equal(t, "succeeded", op.Status, op.Error)
	}
	ready(t, s)

	var warned []string
	for _, line := range strings.Split(s.Logs.String(), "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "ONCE_DATABASE_POOLER") {
			warned = append(warned, line)
		}
	}
	assert.Len(t, warned, 1, "one warning naming ONCE_DATABASE_POOLER")
	t.Logf("%s", warned)
}

// Behind PgBouncer the service's connections to the pooler outlive the
// server behind it. Here the service runs through PgBouncer on a private
// primary with a streaming standby; the standby is promoted after the
// workspace reached it and before the create, so it never receives the
// create (an asynchronous failover that lost it), and PgBouncer is pointed
// at it and reloaded while the service's client connections stay up. The
// retry of the create, within the cache's TTL, is not answered
// 201 Idempotent-Replayed from memory for a store the database does not
// have: it executes again on the new server, which replays it from then
// on.
func TestBehindPgBouncerARetryAfterTheServerChangedExecutesAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	primary := pgcluster.StartForTest(t, "wal_level=replica", "fsync=off")
	standby, err := primary.StartStandby(ctx, primary.Addr(), "standby1", "fsync=off")
	pgcluster.RemoveAtEnd(t, standby)
	require.NoError(t, err)
	db, err := pgsandbox.Create(ctx, primary.SuperuserDSN(), "once_pooler")
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	require.NoError(t, err)

	bouncer := pgbouncer.Start(t, pgbouncer.Config{Target: primary.Addr(), Users: []string{db.AppRole}, PoolSize: 2})
	dsn := bouncer.DSN(t, db.AppDSN)
	cfg := apitest.Config(dsn)
	cfg.DatabasePooler = app.PoolerPgBouncer
	cfg.DBMaxConns, cfg.DBMaxIdle = 2, 2
	s := apitest.Start(t, cfg, db)

	// The standby has the workspace, then takes its own way.
	onStandby := superuserOn(t, standby.SuperuserDSN(), db.Name)
	apitest.Eventually(t, time.Minute, "the workspace on the standby", func() bool {
		// The database itself may not have reached it yet.
		var n int
		err := onStandby.QueryRow(`SELECT count(*) FROM workspaces WHERE id = $1`, s.Workspace).Scan(&n)
		return err == nil && n == 1
	})
	require.NoError(t, standby.Promote(ctx))

	k := key()
	create := func() apitest.Response {
		r := s.Do(t, "POST", "/v1/stores", storeBody("shop-failover"), map[string]string{"Idempotency-Key": k})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		return r
	}
	first := create()
	require.Empty(t, first.Header.Get("Idempotent-Replayed"))
	require.Equal(t, "true", create().Header.Get("Idempotent-Replayed"), "replayed before the switch")

	bouncer.Retarget(t, standby.Addr(), dsn)
	var lost storeCreated
	first.JSON(t, &lost)
	var n int
	require.NoError(t, onStandby.QueryRow(`SELECT count(*) FROM stores WHERE id = $1`, lost.Store.ID).Scan(&n))
	require.Zero(t, n, "the new server has the create: the switch lost nothing")

	again := create()
	assert.Empty(t, again.Header.Get("Idempotent-Replayed"), "replayed a create the database no longer has")
	var made storeCreated
	again.JSON(t, &made)
	assert.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/stores/"+made.Store.ID.String(), nil, nil).Status,
		"the store the retry answered with exists")
	assert.Equal(t, "true", create().Header.Get("Idempotent-Replayed"), "the new server replays it")
}

// superuserOn connects to database on the server of superDSN as its
// superuser, for the test's own checks.
func superuserOn(t *testing.T, superDSN, database string) *sql.DB {
	t.Helper()
	u, err := url.Parse(superDSN)
	require.NoError(t, err)
	u.Path = "/" + database
	db, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}
