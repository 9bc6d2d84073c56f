package main

import (
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgbouncer"
	"github.com/oncehq/once/testsupport/pgtest"
)

// serve, dispatch and work on a plain DATABASE_URL that points at
// PgBouncer in transaction mode (ONCE_DATABASE_POOLER=pgbouncer), with
// fewer server connections than the processes have client connections,
// and the Dispatcher's LISTEN direct (ONCE_DATABASE_LISTEN_URL): every
// create is answered 201, every operation succeeds, and a kill -9 of the
// Dispatcher loses nothing.
//
// The Dispatchers poll every ten minutes, far beyond any wait of this test:
// events are delivered only because NOTIFY (sent through the pooler) reaches
// the LISTEN connection and wakes them. If it did not, the operations would
// not finish in time and the test would fail. The delivery p50 is logged
// for information.
func TestServeDispatchWorkThroughPgBouncer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	db := pgtest.New(t)
	bouncer := pgbouncer.Start(t, pgbouncer.Config{Target: "127.0.0.1:5432", Users: []string{db.AppRole}, PoolSize: 6})
	w := newOpsWorldOn(t, db, app.QueueRedis, "127.0.0.1:6379",
		"DATABASE_URL="+bouncer.DSN(t, db.AppDSN),
		"ONCE_DATABASE_POOLER="+app.PoolerPgBouncer,
		"ONCE_DATABASE_LISTEN_URL="+db.AppDSN,
		"ONCE_DISPATCH_POLL_INTERVAL=10m",
		// The killed Dispatcher's events come back to pending soon.
		"ONCE_DISPATCH_LEASE=2s",
	)
	super := superuserOf(t, db)

	var ops []string
	create := func(n int, prefix string) {
		for i := range n {
			ops = append(ops, w.connectStore(fmt.Sprintf("%s-%d", prefix, i))) // requires 201
		}
	}
	create(60, "bouncer")
	w.waitSucceeded(ops, 2*time.Minute)
	t.Logf("60 creates through PgBouncer: delivery p50 (commit to publish) %s", deliveryP50(t, super))

	// kill -9 of the Dispatcher under load; another takes over.
	create(20, "before-kill")
	w.procs["dispatch"].kill()
	create(20, "no-dispatcher")
	w.procs["dispatch"] = startOnce(t, w.env["dispatch"], "dispatch")
	waitHealthy(t, w.procs["dispatch"], w.ops["dispatch"]+"/healthz")
	create(20, "after-kill")
	// What the killed Dispatcher had claimed is taken over once its lease
	// ran out, by a round of the new one: the next wake-up after that.
	apitest.Eventually(t, time.Minute, "the killed Dispatcher's leases expired", func() bool {
		var leased int
		require.NoError(t, super.QueryRow(`SELECT count(*) FROM outbox_events WHERE status = 'dispatching' AND locked_until > now()`).Scan(&leased))
		return leased == 0
	})
	create(1, "wake")
	w.waitSucceeded(ops, 2*time.Minute)

	// LISTEN never went through the pooler, which would have said so.
	assert.NotContains(t, bouncer.Log(), "when not linked")
}

// superuserOf connects to db as the superuser, which row-level security
// does not restrict.
func superuserOf(t *testing.T, db *pgtest.DB) *sql.DB {
	t.Helper()
	u, err := url.Parse(pgtest.SuperuserDSN())
	require.NoError(t, err)
	u.Path = "/" + db.Name
	super, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	return super
}

// deliveryP50 is the median time from an event's commit to its publish.
func deliveryP50(t *testing.T, super *sql.DB) time.Duration {
	t.Helper()
	var seconds float64
	require.NoError(t, super.QueryRow(`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM dispatched_at - created_at))
		  FROM outbox_events WHERE dispatched_at IS NOT NULL`).Scan(&seconds))
	return time.Duration(seconds * float64(time.Second)).Round(100 * time.Microsecond)
}
