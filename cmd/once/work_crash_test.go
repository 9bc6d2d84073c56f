package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/pgtest"
)

// workSlots is the killed worker's concurrency; slotJobs the store
// verifications it has taken when it dies, running or handed out ahead.
const (
	workSlots = 8
	slotJobs  = 3 * workSlots
)

// `once work` is killed -9 with every one of its slots in a call to the
// platform: half of them held before the platform acted, half after (the
// effect happened, the worker never heard). The broker hands everything
// the dead worker held to a second one (RabbitMQ at once, its connection
// closed; Redis Streams once the messages were idle for
// ONCE_REDIS_CLAIM_IDLE), which ends every job: each operation
// succeeded, and the simulator's ledger holds exactly one verification
// per request token.
func TestWorkerKilledWithEverySlotInFlightLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	for _, q := range []struct{ queue, broker string }{
		{app.QueueRedis, "127.0.0.1:6379"},
		{app.QueueAMQP, "127.0.0.1:5672"},
	} {
		t.Run(q.queue, func(t *testing.T) { killWorkerWithEverySlotInFlight(t, q.queue, q.broker) })
	}
}

func killWorkerWithEverySlotInFlight(t *testing.T, queue, broker string) {
	ctx := context.Background()
	db := pgtest.New(t)
	simAddr, ledger := freeAddr(t), filepath.Join(t.TempDir(), "ledger.jsonl")
	startSim(t, simAddr, ledger)
	admin := simhttp.NewAdmin("http://" + simAddr)
	for _, hold := range []simhttp.Action{simhttp.ActionHold, simhttp.ActionHoldAfter} {
		require.NoError(t, admin.Inject(ctx, simhttp.Fault{Kind: simhttp.KindVerify, Action: hold, Times: workSlots / 2}))
	}
	w := newOpsWorldOn(t, db, queue, broker,
		"ONCE_SIM_URL=http://"+simAddr,
		// A held call never times out: the worker is in it when it dies.
		"ONCE_SIM_TIMEOUT=10m",
		// One slot more than the held calls: a workspace alone whose
		// calls have not yet shown they are short leaves an eighth of
		// the slots spare for others (adapters/queue/holdings.go), so
		// of 9 it takes 8, every one held, and the spare stays empty.
		fmt.Sprintf("ONCE_WORK_CONCURRENCY=%d", workSlots+1),
		"ONCE_REDIS_CLAIM_IDLE=1s",
		"ONCE_LOG_LEVEL=warn",
	)

	ops := make([]string, slotJobs)
	for i := range ops {
		ops[i] = w.connectStore(fmt.Sprintf("slot-%d-%s", i, uuid.NewString()[:8]))
	}
	var held []simhttp.HeldCall
	require.Eventually(t, func() bool {
		var err error
		held, err = admin.Held(ctx)
		require.NoError(t, err)
		return len(held) == workSlots
	}, 2*time.Minute, 10*time.Millisecond, "every slot in a held call")
	// Only the held calls reached the platform: a call beyond the slots
	// would have found no hold left and acted at once.
	assert.Len(t, verifications(t, ledger), workSlots/2, "effects before the kill: the calls held after acting")
	w.procs["work"].kill()
	t.Logf("killed the worker in %d held calls", len(held))
	// The platform finishes the dead worker's calls for nobody.
	released, err := admin.Release(ctx)
	require.NoError(t, err)
	assert.Equal(t, workSlots, released)

	w.procs["work"] = startOnce(t, w.env["work"], "work")
	w.waitSucceeded(ops, 3*time.Minute)

	tokens := requestTokens(t, db, w.workspace)
	effects := verifications(t, ledger)
	for _, op := range ops {
		token := tokens[op]
		require.NotEmpty(t, token, "the request token of operation %s", op)
		assert.Len(t, simhttp.Select(effects, simhttp.Filter{Token: token}), 1, "effects of %s", token)
	}
	assert.Len(t, effects, slotJobs, "no effect beyond one per job")
}

// verifications are the store verifications the simulator's ledger holds.
func verifications(t *testing.T, ledger string) []simhttp.Entry {
	t.Helper()
	entries, err := simhttp.ReadLedger(ledger)
	require.NoError(t, err)
	return simhttp.Select(entries, simhttp.Filter{Kind: simhttp.KindVerify, EffectsOnly: true})
}

// requestTokens are the request tokens of the workspace's jobs, by their
// operation's id, read from their outbox events.
func requestTokens(t *testing.T, db *pgtest.DB, ws uuid.UUID) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range workspaceEvents(t, db, ws) {
		var job model.JobOperation
		require.NoError(t, json.Unmarshal(e.Payload, &job))
		out[job.OperationID.String()] = job.RequestToken
	}
	return out
}
