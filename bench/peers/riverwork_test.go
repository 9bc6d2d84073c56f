package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The River work peer against the real PostgreSQL and a stand-in for the
// simulator: every queued store is read, checked over HTTP once (its
// credentials in the headers, a token of its own) and its outcome and
// event committed; River completes every job.
func TestRiverWorkChecksEveryStoreOnceAndRecordsItsOutcome(t *testing.T) {
	prm := realServices(t)
	ctx := context.Background()
	db, err := createScratchDB(ctx, prm.SuperuserURL, "peers_riverwork")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Drop(context.Background()) })

	var mu sync.Mutex
	tokens := map[string]string{} // token → shop
	sim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Platform, External_shop_id string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.URL.Path != simVerifyPath || r.Header.Get(simAPIKeyHeader) != "ak" || r.Header.Get(simSecretHeader) != "sk_bench_secret" {
			http.Error(w, "unexpected call", http.StatusBadRequest)
			return
		}
		mu.Lock()
		tokens[r.Header.Get(simIdempotency)] = body.External_shop_id
		mu.Unlock()
		if body.External_shop_id == "rt3" {
			_, _ = w.Write([]byte(`{"valid":false,"reason":"rejected"}`))
			return
		}
		_, _ = w.Write([]byte(`{"valid":true}`))
	}))
	defer sim.Close()

	const n = 25
	require.NoError(t, loadRiverWork(ctx, db.URL, n))
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- runRiverWork(runCtx, db.URL, sim.URL, 8, 4, 10*time.Millisecond) }()

	conn, err := pgx.Connect(ctx, db.URL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	deadline := time.Now().Add(time.Minute) // a bound for a hung peer, not a measure
	for {
		var done int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE finalized_at IS NOT NULL`).Scan(&done))
		if done == n {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d of %d jobs finalized", done, n)
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	require.NoError(t, <-ran)

	var completed, active, invalid, events int
	require.NoError(t, conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM river_job WHERE state = 'completed'),
		(SELECT count(*) FROM bench_store WHERE status = 'active'), (SELECT count(*) FROM bench_store WHERE status = 'invalid' AND id = 3),
		(SELECT count(*) FROM bench_event)`).Scan(&completed, &active, &invalid, &events))
	assert.Equal(t, n, completed)
	assert.Equal(t, n-1, active)
	assert.Equal(t, 1, invalid, "store 3's rejection is recorded")
	assert.Equal(t, n, events)
	assert.Len(t, tokens, n, "one call per job, each with a token of its own")
}
