package app_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgbouncer"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

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
		var n int
		require.NoError(t, onStandby.QueryRow(`SELECT count(*) FROM workspaces WHERE id = $1`, s.Workspace).Scan(&n))
		return n == 1
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
