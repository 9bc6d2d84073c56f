package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/redistest"
)

// The writer relays its own events (ONCE_RELAY): its process is killed -9
// right after the commit (nothing published), right after the publish
// (nothing marked), or finds the broker unreachable when it relays. On
// Redis Streams, RabbitMQ and BullMQ, every event is delivered all the
// same, by the Dispatcher of another process once the writer's hold ended
// (or at once, when the writer released them), and each job has exactly
// one side effect in the simulator's ledger (BullMQ, whose workers are
// Node.js: exactly one job per event).
func TestRelayCrashesAndOutagesLoseNoEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	for _, queue := range []string{app.QueueRedis, app.QueueAMQP, app.QueueBullMQ} {
		t.Run(queue, func(t *testing.T) {
			for _, fault := range []string{"after-commit", "after-publish", "broker-unreachable"} {
				t.Run(fault, func(t *testing.T) { runRelayFault(t, queue, fault) })
			}
		})
	}
}

// relayJobs is how many store creates each case sends at once to the
// writer: the first commit's relay kills it, the others die with it or
// never reach it.
const relayJobs = 8

func runRelayFault(t *testing.T, queue, fault string) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	brokerAddr := map[string]string{app.QueueRedis: "127.0.0.1:6379", app.QueueBullMQ: "127.0.0.1:6379", app.QueueAMQP: "127.0.0.1:5672"}[queue]
	bullPrefix := "once-relay-" + uuid.NewString()[:8]
	switch queue {
	case app.QueueAMQP:
		deleteAMQPTopicsLater(t, "amqp://guest:guest@"+brokerAddr+"/", cfg.QueuePrefix)
	case app.QueueRedis:
		redistest.DeleteKeysLater(t, "redis://"+brokerAddr+"/0", cfg.QueuePrefix)
	case app.QueueBullMQ:
		redistest.DeleteKeysLater(t, "redis://"+brokerAddr+"/0", bullPrefix+":")
	}
	simAddr, ledger := freeAddr(t), filepath.Join(t.TempDir(), "ledger.jsonl")
	startSim(t, simAddr, ledger)
	env := func(broker string) []string {
		return []string{
			"DATABASE_URL=" + db.AppDSN,
			"ONCE_JWT_SECRET=" + cfg.JWTSecret,
			"ONCE_IDEMPOTENCY_SECRETS=" + cfg.IdempotencySecrets,
			"ONCE_CREDENTIAL_KEYS=" + cfg.CredentialKeys,
			"ONCE_QUEUE=" + queue,
			"ONCE_REDIS_URL=redis://" + broker + "/0",
			"ONCE_AMQP_URL=amqp://guest:guest@" + broker + "/",
			"ONCE_QUEUE_PREFIX=" + cfg.QueuePrefix,
			"ONCE_BULLMQ_PREFIX=" + bullPrefix,
			"ONCE_OBJECT_STORE=local",
			"ONCE_OBJECT_STORE_DIR=" + t.TempDir(),
			"ONCE_SIM_URL=http://" + simAddr,
			"ONCE_RELAY=true",
			"ONCE_RELAY_HOLD=1s",
			"ONCE_DISPATCH_POLL_INTERVAL=100ms",
			"ONCE_LOG_LEVEL=warn",
		}
	}
	user := uuid.New()
	ws := lastLine(runOnce(t, env(brokerAddr), "workspace", "create", "--name", "relay", "--admin", user.String()))
	token := lastLine(runOnce(t, env(brokerAddr), "token", "--workspace", ws, "--user", user.String()))

	// The writer: the API alone, with its relay, built with the kill
	// points; its broker behind a proxy that is down for the outage case.
	writerEnv := env(brokerAddr)
	var proxy *faultproxy.Proxy
	if fault == "broker-unreachable" {
		proxy = faultproxy.Start(t, brokerAddr)
		writerEnv = env(proxy.Addr())
	} else {
		writerEnv = append(writerEnv, "ONCE_TEST_RELAY_KILL="+fault)
	}
	writerAPI := freeAddr(t)
	writer := startBinary(t, onceTestBinary(t), append(writerEnv,
		"ONCE_HTTP_ADDR="+writerAPI, "ONCE_DISPATCHER=false", "ONCE_WORKER=false"), "serve")
	waitHealthy(t, writer, "http://"+writerAPI+"/healthz")
	if proxy != nil {
		// Up at the start (an AMQP publisher connects then), gone when the
		// relay publishes.
		proxy.Down()
	}

	// Every create is sent once to the writer, and what it did not answer
	// again, with the same key, to the survivor.
	keys := make([]string, relayJobs)
	bodies := make([]string, relayJobs)
	for i := range keys {
		keys[i] = uuid.NewString()
		bodies[i] = fmt.Sprintf(`{"platform":"shopify","name":"Relay shop","external_shop_id":"relay-%d-%s",`+
			`"credentials":{"api_key":"ak_relay","api_secret":"sk_relay_secret"}}`, i, keys[i][:8])
	}
	ops := make([]uuid.UUID, relayJobs)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() { ops[i], _ = createStore("http://"+writerAPI, token, keys[i], bodies[i]) })
	}
	wg.Wait()
	if fault == "broker-unreachable" {
		// The API answers whatever the broker: a create refused for
		// another reason (503 with the database busy on a loaded machine)
		// is sent again, with its key, to the writer.
		for i := range ops {
			var err error
			for try := 0; ops[i] == uuid.Nil && try < 5; try++ {
				ops[i], err = createStore("http://"+writerAPI, token, keys[i], bodies[i])
			}
			require.NoError(t, err, "create %d", i)
		}
	} else {
		select {
		case <-writer.done: // killed itself at the kill point
		case <-time.After(2 * time.Minute):
			t.Fatalf("the writer is still alive: no create reached its kill point (answers: %v)\n%s", ops, writer.output.String())
		}
	}

	// The survivor: Dispatcher and workers (on BullMQ none of ours: the
	// stores' jobs are the Node.js side's, and no webhook is subscribed).
	survivorAPI := freeAddr(t)
	survivorEnv := append(env(brokerAddr), "ONCE_HTTP_ADDR="+survivorAPI, "ONCE_DISPATCHER=true",
		fmt.Sprintf("ONCE_WORKER=%t", queue != app.QueueBullMQ))
	survivor := startOnce(t, survivorEnv, "serve")
	waitHealthy(t, survivor, "http://"+survivorAPI+"/healthz")
	for i, op := range ops {
		if op == uuid.Nil {
			var err error
			ops[i], err = createStore("http://"+survivorAPI, token, keys[i], bodies[i])
			require.NoError(t, err)
		}
	}

	events := func() []model.OutboxEvent { return workspaceEvents(t, db, uuid.MustParse(ws)) }
	apitest.Eventually(t, time.Minute, "every event dispatched", func() bool {
		for _, e := range events() {
			if e.Status != model.OutboxDispatched {
				return false
			}
		}
		return true
	})
	delivered := events()
	require.Len(t, delivered, relayJobs, "one event per create")
	released := 0
	for _, e := range delivered {
		assert.Zero(t, e.AttemptCount, "a writer's crash or an outage costs no attempt: %s", e.ID)
		if e.LastError != "" {
			released++
		}
	}
	if fault == "broker-unreachable" {
		// Released by the writer with the reason; an event whose hold
		// ended while the writer's publishes timed out one after another
		// was the Dispatcher's first, with nothing to record.
		assert.NotZero(t, released, "events released by the writer with the reason")
	}

	if queue == app.QueueBullMQ {
		requireOneJobEach(t, bullPrefix, delivered)
		return
	}
	apitest.Eventually(t, 2*time.Minute, "one verification per store", func() bool {
		entries, err := simhttp.ReadLedger(ledger)
		require.NoError(t, err)
		return len(simhttp.Select(entries, simhttp.Filter{Kind: simhttp.KindVerify, EffectsOnly: true})) >= relayJobs
	})
	entries, err := simhttp.ReadLedger(ledger)
	require.NoError(t, err)
	for _, e := range delivered {
		var job model.JobOperation
		require.NoError(t, json.Unmarshal(e.Payload, &job))
		assert.Len(t, simhttp.Select(entries, simhttp.Filter{Token: job.RequestToken, EffectsOnly: true}), 1,
			"effects of %s", job.RequestToken)
	}
	assert.Len(t, simhttp.Select(entries, simhttp.Filter{EffectsOnly: true}), relayJobs, "no effect beyond one per job")
}

// createStore posts a store create with key and returns its operation.
func createStore(api, token, key, body string) (uuid.UUID, error) {
	req, err := http.NewRequest(http.MethodPost, api+"/v1/stores", strings.NewReader(body))
	if err != nil {
		return uuid.Nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return uuid.Nil, err
	}
	defer res.Body.Close()
	var out struct {
		Operation struct {
			ID uuid.UUID `json:"id"`
		} `json:"operation"`
	}
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusAccepted {
		return uuid.Nil, fmt.Errorf("create: %s", res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return uuid.Nil, err
	}
	return out.Operation.ID, nil
}

// workspaceEvents reads the workspace's outbox events under its row-level
// security context.
func workspaceEvents(t *testing.T, db *pgtest.DB, ws uuid.UUID) []model.OutboxEvent {
	t.Helper()
	var rows []struct {
		ID           uuid.UUID       `bun:"id"`
		Status       string          `bun:"status"`
		AttemptCount int             `bun:"attempt_count"`
		LastError    *string         `bun:"last_error"`
		Payload      json.RawMessage `bun:"event_payload"`
	}
	err := db.App.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.workspace_id', ?, true)", ws.String()); err != nil {
			return err
		}
		return tx.NewSelect().Table("outbox_events").Column("id", "status", "attempt_count", "last_error", "event_payload").Scan(ctx, &rows)
	})
	require.NoError(t, err)
	out := make([]model.OutboxEvent, len(rows))
	for i, r := range rows {
		out[i] = model.OutboxEvent{ID: r.ID, Status: model.OutboxStatus(r.Status), AttemptCount: r.AttemptCount, Payload: r.Payload}
		if r.LastError != nil {
			out[i].LastError = *r.LastError
		}
	}
	return out
}

// requireOneJobEach: every event is one BullMQ job, found by its id (the
// event id), and the queue's wait list names each once.
func requireOneJobEach(t *testing.T, prefix string, events []model.OutboxEvent) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	ctx := context.Background()
	queue := prefix + ":" + model.EventStoreCredentialsVerify
	waiting, err := rdb.LRange(ctx, queue+":wait", 0, -1).Result()
	require.NoError(t, err)
	seen := map[string]int{}
	for _, id := range waiting {
		seen[id]++
	}
	for _, e := range events {
		n, err := rdb.Exists(ctx, queue+":"+e.ID.String()).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "job %s", e.ID)
		assert.Equal(t, 1, seen[e.ID.String()], "job %s waiting once", e.ID)
	}
	assert.Len(t, waiting, len(events), "no job beyond one per event")
}
