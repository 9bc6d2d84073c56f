package main

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgcluster"
)

// A commit whose wait for the synchronous standby is cancelled stays
// committed on the primary alone; PostgreSQL then answers the COMMIT with
// success and a WARNING. The standby's stream is stalled, a store create
// waits in SyncRep, and an operator's pg_cancel_backend (as a
// statement_timeout or a demotion would) ends the wait: the client must
// get the retryable 503, not 201, and the relay must not publish the
// create's job. The primary then dies before the standby had the commit,
// the standby is promoted (the row is gone), and the retry with the same
// key executes the create once: one store, one verification on the
// platform.
func TestCancelledSyncWaitIsNeverAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters and processes")
	}
	// The relay on, as in production: serve publishes its commits itself.
	f := startFailover(t, true, "ONCE_RELAY=true")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// One create through the whole path first: the relay publishes.
	warm := newCreate("syncwait-warm")
	a, err := f.load.post(warm)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, a.status, a.body)
	warm.store = a.store
	f.w.waitSucceeded([]string{a.op.String()}, time.Minute)
	relayed := f.metric("serve", "once_relay_published_total")
	require.Positive(t, relayed, "the relay published the first create's job")

	// The standby stops hearing from the primary: every commit waits.
	f.stream.Stall()
	super, err := sql.Open("pgx", f.primary.SuperuserDSN())
	require.NoError(t, err)
	defer super.Close()
	c := newCreate("syncwait-cancelled")
	got := f.postCancelled(ctx, super, c, "%idempotency_requests%")
	require.Equal(t, http.StatusServiceUnavailable, got.status, "a commit the standby may not have: %s", got.body)
	assert.Contains(t, got.body, `"code":"UNAVAILABLE"`)
	assert.True(t, got.retry)
	assert.Equal(t, relayed, f.metric("serve", "once_relay_published_total"), "the relay published the unconfirmed commit's job")
	assert.Equal(t, 1.0, f.metric("serve", "once_db_commits_unconfirmed_total"))
	assert.Contains(t, f.w.procs["serve"].output.String(), "canceling wait for synchronous replication")

	// A retry while the standby is still away finds the record on the
	// primary, which cannot confirm it: no replay of what a failover may
	// lose.
	got = f.postCancelled(ctx, super, c, "%once.replay%")
	require.Equal(t, http.StatusServiceUnavailable, got.status, "a replay of a record the standby may not have: %s", got.body)
	assert.Equal(t, relayed, f.metric("serve", "once_relay_published_total"))

	// The primary dies before the standby had the commit; the standby
	// takes over without it.
	require.NoError(t, f.primary.Kill())
	f.stream.Down()
	require.NoError(t, f.standby.Promote(ctx))

	// The retry with the same key executes the create, once.
	var again answer
	apitest.Eventually(t, 2*time.Minute, "the retry answered 2xx", func() bool {
		again, err = f.load.post(c)
		require.NoError(t, err)
		if !again.retry {
			require.Equal(t, http.StatusCreated, again.status, again.body)
		}
		return again.status == http.StatusCreated
	})
	assert.False(t, again.replayed, "the promoted standby has no record to replay")
	f.w.waitSucceeded([]string{again.op.String()}, 2*time.Minute)
	assert.Equal(t, 1, f.effectsPerShop()[c.shop], "verifications of the retried create on the platform")
	assert.Empty(t, f.missing([]*create{warm}), "the create acknowledged before the stall survived")
}

// postCancelled sends c and, once its COMMIT (a query like `like`) waits
// for the standby, cancels the wait as an operator's pg_cancel_backend
// would (a statement_timeout or a cancel request ends it the same way),
// and returns the answer.
func (f *failover) postCancelled(ctx context.Context, super *sql.DB, c *create, like string) answer {
	f.t.Helper()
	answered := make(chan answer, 1)
	go func() {
		a, err := f.load.post(c)
		assert.NoError(f.t, err)
		answered <- a
	}()
	pgcluster.CancelSyncRepWait(f.t, super, `datname = $1 AND query LIKE $2`, f.db.Name, like)
	return <-answered
}

// metric is the value of an unlabelled sample on command's /metrics.
func (f *failover) metric(command, name string) float64 {
	f.t.Helper()
	status, body := f.w.scrape(command, "/metrics")
	require.Equal(f.t, http.StatusOK, status)
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			require.NoError(f.t, err)
			return n
		}
	}
	f.t.Fatalf("no %s on %s's /metrics", name, command)
	return 0
}
