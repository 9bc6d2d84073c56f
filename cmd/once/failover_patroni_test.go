package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/patroni"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

// Failovers nobody promotes by hand: PostgreSQL under Patroni (etcd, three
// nodes, synchronous_mode and synchronous_mode_strict), serve, dispatch
// and work on one of the two ways in a deployment uses (the multi-host URL
// with target_session_attrs=read-write; HAProxy checking Patroni's
// /primary), clients creating stores with idempotency keys and retrying
// 5xx and lost answers with the same key, while the leader is killed -9
// (its whole node) twice, cut off from etcd once and switched over twice.
// Afterwards every create acknowledged 2xx exists with its operation
// ended, none was executed twice, the platform's ledger shows one
// verification per key, and no answer was a 500. Per failover it logs the
// 503 answers and the time from the fault to the first 201 after it.
//
// It takes a few minutes and starts a dozen processes: it runs when
// ONCE_PATRONI_FAILOVER is set (make test-patroni), not in every make test.
func TestPatroniFailoverKeepsExecutesOnce(t *testing.T) {
	if os.Getenv("ONCE_PATRONI_FAILOVER") == "" {
		t.Skip("set ONCE_PATRONI_FAILOVER=1 to run the Patroni failover test (a few minutes)")
	}
	t.Run("multi-host URL", func(t *testing.T) { runPatroniFailover(t, false) })
	t.Run("HAProxy", func(t *testing.T) { runPatroniFailover(t, true) })
}

// fault is one failover of the run and what the clients saw of it.
type fault struct {
	kind string
	at   time.Time
	// unavailable is the 503 answers from the fault to the next one.
	unavailable int
	// firstAck is the time from the fault to the first 201 after it.
	firstAck time.Duration
}

func runPatroniFailover(t *testing.T, viaHAProxy bool) {
	c := patroni.StartForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	db, err := pgsandbox.Create(ctx, c.MultiHostDSN("postgres"), "once_patroni")
	require.NoError(t, err)
	_ = db.App.Close()
	_ = db.Owner.Close()
	u, err := url.Parse(db.AppDSN)
	require.NoError(t, err)
	if viaHAProxy {
		u.Host = c.HAProxyAddr()
	} else {
		mh, err := url.Parse(c.MultiHostDSN("postgres"))
		require.NoError(t, err)
		u.Host = mh.Host
		q := u.Query()
		q.Set("target_session_attrs", "read-write")
		u.RawQuery = q.Encode()
	}
	q := u.Query()
	q.Set("connect_timeout", "3")
	u.RawQuery = q.Encode()

	f := &failover{t: t, db: db, ledger: filepath.Join(t.TempDir(), "ledger.jsonl"), settleDSN: c.MultiHostDSN("postgres")}
	simAddr := freeAddr(t)
	startSim(t, simAddr, f.ledger)
	f.w = newOpsWorldOn(t, db, app.QueueRedis, "127.0.0.1:6379",
		"DATABASE_URL="+u.String(),
		"ONCE_SIM_URL=http://"+simAddr,
		"ONCE_SIM_TIMEOUT=5s",
		"ONCE_WORKER_MAX_RETRIES=50",
		"ONCE_DISPATCH_LEASE=5s",
	)
	f.load = newCreateLoad(f.w.api, f.w.token, 50*time.Millisecond)
	began := time.Now()
	f.load.start(8)
	require.NoError(t, f.load.waitAcked(ctx, 100))

	var faults []*fault
	unavailable := func() int {
		f.load.mu.Lock()
		defer f.load.mu.Unlock()
		return f.load.statuses[http.StatusServiceUnavailable]
	}
	run := func(kind string, do func() string, heal func(string)) {
		t.Helper()
		ft := &fault{kind: kind, at: time.Now(), unavailable: unavailable()}
		faults = append(faults, ft)
		old := do()
		require.NoError(t, f.load.waitAcked(ctx, 50), "creates after %s", kind)
		if heal != nil {
			heal(old)
		}
		c.WaitHealthy()
		require.NoError(t, f.load.waitAcked(ctx, 50), "creates after %s healed", kind)
	}
	run("leader's node killed -9", c.KillLeader, c.StartNode)
	run("switchover", c.Switchover, nil)
	run("leader cut from etcd", c.CutLeaderFromEtcd, c.Reconnect)
	run("switchover", c.Switchover, nil)
	run("leader's node killed -9", c.KillLeader, c.StartNode)
	f.load.halt()
	elapsed := time.Since(began)

	acked := f.load.acknowledged()
	for i, ft := range faults {
		until := unavailable()
		if i+1 < len(faults) {
			until = faults[i+1].unavailable
		}
		ft.unavailable = until - ft.unavailable
		// The leader's loss as the clients see it: the first answer
		// after the fault that was not 2xx; the outage ends with the
		// first 201 after that.
		var down time.Time
		for _, at := range f.load.refused {
			if at.After(ft.at) && (down.IsZero() || at.Before(down)) {
				down = at
			}
		}
		if down.IsZero() {
			continue // no client saw it
		}
		for _, cr := range acked {
			if d := cr.ackedAt.Sub(ft.at); cr.ackedAt.After(down) && (ft.firstAck == 0 || d < ft.firstAck) {
				ft.firstAck = d
			}
		}
	}
	f.load.mu.Lock()
	t.Logf("%d creates acknowledged in %s (%.0f/s); answers by status %v", len(acked), elapsed.Round(time.Second),
		float64(len(acked))/elapsed.Seconds(), f.load.statuses)
	assert.Empty(t, f.load.failures, "answers that are neither 2xx nor worth a retry")
	assert.Zero(t, f.load.statuses[http.StatusInternalServerError], "no 500 in a failover: 503 and retry")
	f.load.mu.Unlock()
	var firsts []time.Duration
	for _, ft := range faults {
		t.Logf("FAILOVER %s: %d answers 503, first 201 %.1fs after the fault", ft.kind, ft.unavailable, ft.firstAck.Seconds())
		firsts = append(firsts, ft.firstAck)
	}
	slices.Sort(firsts)
	t.Logf("FAILOVERS: first 201 after the fault p50 %.1fs, max %.1fs", firsts[len(firsts)/2].Seconds(), firsts[len(firsts)-1].Seconds())

	// Every process followed the leader without a restart.
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
		assert.Contains(t, p.output.String(), "found the database server", "%s said nothing of finding the new leader", command)
	}

	assert.Empty(t, f.missing(acked), "acknowledged creates lost")
	assert.Empty(t, f.retryAll(acked), "acknowledged creates executed again on a retry")
	f.waitSettled()
	assert.Empty(t, f.unfinished(acked), "operations never finished")
	perShop := f.effectsPerShop()
	sent := map[string]bool{}
	f.load.mu.Lock()
	for _, cr := range f.load.creates {
		sent[cr.shop] = true
	}
	f.load.mu.Unlock()
	for _, cr := range acked {
		assert.Equal(t, 1, perShop[cr.shop], "verifications of %s (key %s) on the platform", cr.shop, cr.key)
	}
	for shop, n := range perShop {
		assert.True(t, sent[shop], "a verification of %s, which no client created", shop)
		assert.LessOrEqual(t, n, 1, "verifications of %s", shop)
	}
}
