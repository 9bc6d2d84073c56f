package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

// A PostgreSQL failover under load, as a team with a primary and a
// streaming standby lives it: serve, dispatch and work on a multi-host
// DATABASE_URL (target_session_attrs=read-write), clients creating stores
// with idempotency keys and retrying 5xx and lost answers with the same
// key; the primary is killed -9 (every server process at once) and the
// standby promoted.
//
// With synchronous replication (the supported setting): every create
// acknowledged 2xx exists afterwards and its verification is delivered and
// done, the platform's ledger shows one verification per key, every
// process recovered unaided, and retries after the failover are answered
// from the database.
//
// With asynchronous replication the standby's stream is held up for a
// while before the kill (a replication lag), and the test measures what
// is lost: creates acknowledged 201 that the promoted standby never
// received. Their retries with the same keys are not answered from the
// completed-response cache (the database changed under it) but executed
// again, and their verifications carry the same request token, so the
// platform still acts once per key.
func TestFailoverKeepsExecutesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters and processes")
	}
	t.Run("synchronous", func(t *testing.T) { runFailover(t, true) })
	t.Run("asynchronous", func(t *testing.T) { runFailover(t, false) })
}

// failover is one run: the pair of clusters, the processes on them, the
// simulator and the load.
type failover struct {
	t                *testing.T
	primary, standby *pgcluster.Cluster
	stream           *faultproxy.Proxy // the standby's replication connection
	db               *pgsandbox.Sandbox
	w                *opsWorld
	ledger           string
	load             *createLoad
	// settleDSN, if set, is the superuser's way to the primary that
	// waitSettled reads (database postgres; its own is put in); empty: the
	// promoted standby.
	settleDSN string
}

func runFailover(t *testing.T, synchronous bool) {
	began := time.Now()
	f := startFailover(t, synchronous)
	t.Logf("primary, standby and processes up in %s", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	f.load.start(4)
	require.NoError(t, f.load.waitAcked(ctx, 60))
	lagFrom := time.Now()
	var inLag int64
	if !synchronous {
		// The standby stops receiving: what commits from now on is on
		// the primary only.
		f.stream.Stall()
		before := f.load.acked.Load()
		require.NoError(t, f.load.waitAcked(ctx, 40))
		inLag = f.load.acked.Load() - before
	}
	killed := time.Now()
	require.NoError(t, f.primary.Kill())
	f.stream.Down()
	require.NoError(t, f.load.waitRefused(ctx, 8))
	require.NoError(t, f.standby.Promote(ctx))
	promoted := time.Now()
	require.NoError(t, f.load.waitAcked(ctx, 60))
	f.load.halt()

	acked := f.load.acknowledged()
	firstAfter := time.Duration(0)
	for _, c := range acked {
		if c.ackedAt.After(killed) && (firstAfter == 0 || c.ackedAt.Sub(killed) < firstAfter) {
			firstAfter = c.ackedAt.Sub(killed)
		}
	}
	f.load.mu.Lock()
	t.Logf("%d creates acknowledged; answers by status %v; first 201 %s after the kill (promoted after %s)",
		len(acked), f.load.statuses, firstAfter.Round(time.Millisecond), promoted.Sub(killed).Round(time.Millisecond))
	assert.Empty(t, f.load.failures, "answers that are neither 2xx nor worth a retry")
	assert.Zero(t, f.load.statuses[http.StatusInternalServerError], "no 500 in a failover: 503 and retry")
	f.load.mu.Unlock()

	// Every process recovered unaided.
	for command, p := range f.w.procs {
		select {
		case <-p.done:
			t.Fatalf("%s exited", command)
		default:
		}
		apitest.Eventually(t, time.Minute, command+" ready again", func() bool {
			status, _ := f.w.ready(command)
			return status == http.StatusOK
		})
	}

	lost := f.missing(acked)
	verifiedBefore := f.effectsPerShop()
	if synchronous {
		assert.Empty(t, lost, "acknowledged creates lost with synchronous replication")
	} else {
		// The creates acknowledged while the standby was held up cannot
		// be there.
		require.NotEmpty(t, lost, "asynchronous replication lost nothing: the lag did not happen")
		alreadyVerified := 0
		for _, c := range lost {
			alreadyVerified += verifiedBefore[c.shop]
		}
		lag := killed.Sub(lagFrom)
		t.Logf("ASYNC LOSS: %d of %d acknowledged creates lost (with their operations, events and idempotency records): "+
			"the standby lagged %s, in which %d creates were acknowledged (%.1f/s); %d of the lost had already been verified on the platform",
			len(lost), len(acked), lag.Round(time.Millisecond), inLag, float64(inLag)/lag.Seconds(), alreadyVerified)
	}

	// Retries after the failover are answered by the database: a replay
	// only of what it has, the rest executed again.
	reexecuted := f.retryAll(acked)
	assert.Len(t, reexecuted, len(lost), "executed again exactly the creates the database lost")

	// Settled: the new primary has no event left to dispatch and the
	// workers are done with every message, so an operation not final now
	// stays so.
	f.waitSettled()
	t.Logf("settled %s after the promotion", time.Since(promoted).Round(time.Millisecond))
	var ops []*create
	for _, c := range append(acked, reexecuted...) {
		if status, _ := f.w.call(http.MethodGet, "/v1/operations/"+c.op.String(), nil); status == http.StatusOK {
			ops = append(ops, c) // not an operation lost with its create
		}
	}
	unfinished := f.unfinished(ops)
	if synchronous {
		// Every event delivered: every acknowledged create's verification
		// done.
		assert.Empty(t, unfinished, "operations never finished")
	} else {
		// A job done on the old primary in the lag, its event marked
		// dispatched before it: the standby has the event dispatched and
		// the operation running, and the message is gone from the queue.
		t.Logf("ASYNC LOSS: %d operations whose job's outcome was lost (event dispatched, operation never finished)", len(unfinished))
	}

	// One verification per key on the platform, whatever was lost and
	// executed again: counted per key (each create its own shop), not per
	// token.
	perShop := f.effectsPerShop()
	for _, c := range acked {
		assert.Equal(t, 1, perShop[c.shop], "verifications of %s (key %s) on the platform", c.shop, c.key)
	}
}

// startFailover starts the pair, the simulator and the processes; extra
// is more of the processes' environment.
func startFailover(t *testing.T, synchronous bool, extra ...string) *failover {
	f := &failover{t: t, ledger: filepath.Join(t.TempDir(), "ledger.jsonl")}
	// fsync=off on both servers: a kill -9 of the primary's processes
	// (not of its machine) loses nothing its OS has, so what the test
	// shows holds, and the commits that wait for the standby wait for no
	// disk of this shared machine.
	settings := []string{"wal_level=replica", "fsync=off"}
	if synchronous {
		settings = append(settings, "synchronous_standby_names='*'")
	}
	f.primary = pgcluster.StartForTest(t, settings...)
	// The standby streams through a proxy the asynchronous run stalls.
	f.stream = faultproxy.Start(t, f.primary.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	f.standby, err = f.primary.StartStandby(ctx, f.stream.Addr(), "standby1", "fsync=off")
	pgcluster.RemoveAtEnd(t, f.standby)
	require.NoError(t, err)
	f.waitStreaming(synchronous)

	f.db, err = pgsandbox.Create(ctx, f.primary.SuperuserDSN(), "once_failover")
	require.NoError(t, err)

	// The sandbox's pools are to the primary only; the processes connect
	// to both hosts.
	_ = f.db.App.Close()
	_ = f.db.Owner.Close()
	u, err := url.Parse(f.db.AppDSN)
	require.NoError(t, err)
	u.Host = f.primary.Addr() + "," + f.standby.Addr()
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	q.Set("connect_timeout", "5")
	u.RawQuery = q.Encode()

	simAddr := freeAddr(t)
	startSim(t, simAddr, f.ledger)
	f.w = newOpsWorldOn(t, f.db, app.QueueRedis, "127.0.0.1:6379", append([]string{
		"DATABASE_URL=" + u.String(),
		"ONCE_SIM_URL=http://" + simAddr,
		"ONCE_SIM_TIMEOUT=5s",
		// An outage of some seconds must not use up a job's retries.
		"ONCE_WORKER_MAX_RETRIES=50",
		// Batches a Dispatcher had claimed when the primary died come back
		// soon after.
		"ONCE_DISPATCH_LEASE=5s",
	}, extra...)...,
	)
	// The start-up check saw the replication as it is.
	says := "the primary has no synchronous standby"
	if synchronous {
		says = "commits wait for a synchronous standby"
	}
	assert.Contains(t, f.w.procs["serve"].output.String(), says)
	f.load = newCreateLoad(t, f.w.api, f.w.token, 15)
	return f
}

// waitStreaming waits until the standby streams from the primary (as its
// synchronous standby, if synchronous).
func (f *failover) waitStreaming(synchronous bool) {
	super, err := sql.Open("pgx", f.primary.SuperuserDSN())
	require.NoError(f.t, err)
	defer super.Close()
	want := "async"
	if synchronous {
		want = "sync"
	}
	apitest.Eventually(f.t, time.Minute, "the standby streaming ("+want+")", func() bool {
		var n int
		require.NoError(f.t, super.QueryRow(`SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = $1`, want).Scan(&n))
		return n == 1
	})
}

// missing is the creates whose store the API does not find.
func (f *failover) missing(creates []*create) []*create {
	var out []*create
	for _, c := range creates {
		status, body := f.w.call(http.MethodGet, "/v1/stores/"+c.store.String(), nil)
		switch status {
		case http.StatusOK:
		case http.StatusNotFound:
			out = append(out, c)
		default:
			f.t.Fatalf("GET store %s: %d %s", c.store, status, body)
		}
	}
	return out
}

// retryAll sends every create again with its key: a replay must name a
// store that exists; a create the database lost is executed again. It
// returns the creates executed again, with their new ids.
func (f *failover) retryAll(creates []*create) []*create {
	var again []*create
	for _, c := range creates {
		a, err := f.load.post(c)
		require.NoError(f.t, err)
		require.Equal(f.t, http.StatusCreated, a.status, a.body)
		if !a.replayed {
			again = append(again, &create{key: c.key, shop: c.shop, store: a.store, op: a.op})
			continue
		}
		status, body := f.w.call(http.MethodGet, "/v1/stores/"+a.store.String(), nil)
		require.Equal(f.t, http.StatusOK, status, "a replay of a store the database does not have: %s", body)
	}
	return again
}

// waitSettled waits until the promoted standby has no event pending or
// dispatching and every stream of the test's queues is delivered to its
// consumer group in full and acknowledged.
func (f *failover) waitSettled() {
	super := f.superuser()
	defer super.Close()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	ctx := context.Background()
	apitest.Eventually(f.t, 3*time.Minute, "every event dispatched and every message done", func() bool {
		var open int
		require.NoError(f.t, super.QueryRow(`SELECT count(*) FROM outbox_events WHERE status IN ('pending', 'dispatching')`).Scan(&open))
		if open > 0 {
			return false
		}
		keys, err := rdb.Keys(ctx, f.w.queuePrefix+"*").Result()
		require.NoError(f.t, err)
		for _, stream := range keys {
			// The destinations' records live under the prefix too.
			if kind, err := rdb.Type(ctx, stream).Result(); err != nil || kind != "stream" {
				require.NoError(f.t, err)
				continue
			}
			info, err := rdb.XInfoStream(ctx, stream).Result()
			require.NoError(f.t, err)
			groups, err := rdb.XInfoGroups(ctx, stream).Result()
			require.NoError(f.t, err)
			for _, g := range groups {
				if g.Pending > 0 || g.LastDeliveredID != info.LastGeneratedID {
					return false
				}
			}
		}
		return true
	})
}

// superuser is the test's database on the primary (settleDSN, or else the
// promoted standby) as the superuser, past row-level security.
func (f *failover) superuser() *sql.DB {
	dsn := f.settleDSN
	if dsn == "" {
		dsn = f.standby.SuperuserDSN()
	}
	u, err := url.Parse(dsn)
	require.NoError(f.t, err)
	u.Path = "/" + f.db.Name
	super, err := sql.Open("pgx", u.String())
	require.NoError(f.t, err)
	return super
}

// storedShops is the shops of every store in the database.
func (f *failover) storedShops() map[string]bool {
	super := f.superuser()
	defer super.Close()
	rows, err := super.Query(`SELECT external_shop_id FROM stores`)
	require.NoError(f.t, err)
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var shop string
		require.NoError(f.t, rows.Scan(&shop))
		out[shop] = true
	}
	require.NoError(f.t, rows.Err())
	return out
}

// unfinished is the creates whose operation is neither succeeded nor
// failed; a failed one fails the test.
func (f *failover) unfinished(creates []*create) []*create {
	var out []*create
	for _, c := range creates {
		status, body := f.w.call(http.MethodGet, "/v1/operations/"+c.op.String(), nil)
		require.Equal(f.t, http.StatusOK, status, string(body))
		var op struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		require.NoError(f.t, json.Unmarshal(body, &op))
		assert.NotEqual(f.t, "failed", op.Status, "operation %s: %s", c.op, op.Error)
		if op.Status != "succeeded" && op.Status != "failed" {
			out = append(out, c)
		}
	}
	return out
}

// effectsPerShop counts the platform's verifications per shop.
func (f *failover) effectsPerShop() map[string]int {
	entries, err := simhttp.ReadLedger(f.ledger)
	require.NoError(f.t, err)
	out := map[string]int{}
	for _, e := range simhttp.Select(entries, simhttp.Filter{Kind: simhttp.KindVerify, EffectsOnly: true}) {
		var eff platformsim.Effect
		require.NoError(f.t, json.Unmarshal(e.Data, &eff))
		out[eff.ExternalShopID]++
	}
	return out
}
