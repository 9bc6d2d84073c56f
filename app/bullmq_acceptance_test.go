package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/bullmqtest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

// bullmqConfig is the test configuration with ONCE_QUEUE=bullmq under a
// BullMQ prefix of the test's own. It needs Redis and node.
func bullmqConfig(t *testing.T, databaseURL string) app.Config {
	t.Helper()
	bullmqtest.Require(t)
	cfg := apitest.Config(databaseURL)
	cfg.Queue = app.QueueBullMQ
	cfg.RedisURL = bullmqtest.RedisURL()
	cfg.BullMQPrefix = bullmqtest.Prefix(t, cfg.RedisURL)
	return cfg
}

// 1,000 events over 10 workspaces, dispatched by `once serve`'s own
// Dispatcher with ONCE_QUEUE=bullmq, are each processed once by a stock
// BullMQ worker in Node.js, in the queue and at the priority the mapping
// says, with the data the event carries.
func TestPostgresBullMQThousandEventsProcessedOnceByNodeWorkers(t *testing.T) {
	db := pgtest.New(t)
	cfg := bullmqConfig(t, db.AppDSN)
	cfg.Dispatcher, cfg.Worker = true, true // serve's defaults: the worker takes once's own jobs only
	cfg.DispatchPollInterval = 50 * time.Millisecond
	const typeA, typeB = "test.bullmq.a", "test.bullmq.b"
	cfg.BullMQQueues, cfg.BullMQPriorities = typeB+"=bullmq-b", typeB+"=2"
	var pub ports.Publisher
	var disc ports.OutboxDiscovery
	s := apitest.Start(t, cfg, db, fx.Populate(&pub, &disc))
	require.IsType(t, &queue.ByType{}, pub, "ONCE_QUEUE=bullmq wires BullMQ, and Redis Streams for once's own jobs")
	assert.Contains(t, s.Logs.String(), "worker consumes once's own jobs only", "serve says what its worker takes")

	w := bullmqtest.StartWorker(t, bullmqtest.Options{
		RedisURL: cfg.RedisURL, Prefix: cfg.BullMQPrefix, Queues: []string{typeA, "bullmq-b"}, Concurrency: 20,
	})

	ctx := context.Background()
	clock := system.NewClock()
	const nWorkspaces, perWorkspace = 10, 100
	want := map[string]model.OutboxEvent{}
	for i := range nWorkspaces {
		ws := uuid.New()
		_, err := s.WS.Create(ctx, ws, fmt.Sprintf("bullmq-%d", i), uuid.New())
		require.NoError(t, err)
		err = s.UoW.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
			var evs []model.OutboxEvent
			for j := range perWorkspace {
				eventType := []string{typeA, typeB}[j%2]
				ev, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, eventType, "test", uuid.New(), map[string]int{"n": j}, clock.Now())
				if err != nil {
					return err
				}
				evs = append(evs, ev)
				want[ev.ID.String()] = ev
			}
			return tx.Outbox().Append(ctx, evs...)
		})
		require.NoError(t, err)
	}
	all := make([]string, 0, len(want))
	for id := range want {
		all = append(all, id)
	}
	w.WaitProcessed(t, 3*time.Minute, all...)
	apitest.Eventually(t, 30*time.Second, "every event marked dispatched", func() bool {
		st, err := disc.Stats(ctx, clock.Now())
		require.NoError(t, err)
		return st.ByStatus[model.OutboxDispatched] == int64(len(want))
	})

	processed := w.Processed()
	assert.Len(t, processed, len(want), "each job processed once")
	for id, n := range w.Counts() {
		assert.Equal(t, 1, n, "job %s processed %d times", id, n)
	}
	for _, j := range processed {
		ev, ok := want[j.ID]
		if !assert.True(t, ok, "a job once did not publish: %s", j.ID) {
			continue
		}
		var d bullmq.Data
		require.NoError(t, json.Unmarshal(j.Data, &d))
		assert.Equal(t, ev.ID, d.EventID)
		assert.Equal(t, ev.WorkspaceID, d.WorkspaceID)
		assert.JSONEq(t, string(ev.Payload), string(d.Payload))
		assert.Equal(t, ev.Type, j.Name)
		if ev.Type == typeB {
			assert.Equal(t, "bullmq-b", j.Queue)
			assert.Equal(t, 2, j.Priority)
		} else {
			assert.Equal(t, typeA, j.Queue)
			assert.Zero(t, j.Priority)
		}
	}
	assert.Empty(t, w.Failed())
}

// A Dispatcher publishes to BullMQ and dies before marking; after its lease
// another publishes the same events again. BullMQ finds each job by its id
// (the event id) and adds none: the Node.js worker sees each job id once.
func TestPostgresBullMQRepublishAfterACrashIsDeduplicated(t *testing.T) {
	db := pgtest.New(t)
	cfg := bullmqConfig(t, db.AppDSN)
	var disc ports.OutboxDiscovery
	s := apitest.Start(t, cfg, db, fx.Populate(&disc)) // the Dispatchers are the test's
	bc, err := cfg.BullMQConfig.PublisherConfig(cfg.RedisURL)
	require.NoError(t, err)
	pub, err := bullmq.New(bc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	const n = 5
	for i := range n {
		createStore(t, s, fmt.Sprintf("bullmq-crash-%d", i))
	}
	events := s.Events(t)
	require.Len(t, events, n)
	var eventIDs []string
	for _, e := range events {
		eventIDs = append(eventIDs, e.ID.String())
	}
	// One job at a time, oldest first: a job published after the
	// republish is processed after anything the republish added.
	w := bullmqtest.StartWorker(t, bullmqtest.Options{
		RedisURL: cfg.RedisURL, Prefix: cfg.BullMQPrefix, Queues: []string{model.EventStoreCredentialsVerify},
	})

	publishAndDie(t, s, disc, pub)
	w.WaitProcessed(t, time.Minute, eventIDs...)
	for _, e := range s.Events(t) {
		require.Equal(t, model.OutboxDispatching, e.Status, "never marked")
		require.Equal(t, "dispatcher-a", e.LockedBy)
	}

	republishAfterLease(t, s, disc, pub, n)
	for _, e := range s.Events(t) {
		assert.Equal(t, model.OutboxDispatched, e.Status)
	}

	sentinel := ports.Message{ID: uuid.New(), Type: model.EventStoreCredentialsVerify, WorkspaceID: s.Workspace, Payload: []byte(`{}`)}
	require.NoError(t, pub.Publish(context.Background(), sentinel))
	w.WaitProcessed(t, time.Minute, sentinel.ID.String())
	counts := w.Counts()
	for _, id := range eventIDs {
		assert.Equal(t, 1, counts[id], "job %s processed once", id)
	}
	assert.Len(t, counts, n+1)

	rc := bullmqtest.Client(t, cfg.RedisURL)
	duplicated := 0
	stream := cfg.BullMQPrefix + ":" + model.EventStoreCredentialsVerify + ":events"
	for _, x := range rc.XRange(context.Background(), stream, "-", "+").Val() {
		if x.Values["event"] == "duplicated" {
			duplicated++
		}
	}
	assert.Equal(t, n, duplicated, "BullMQ recorded each republish as a duplicate")
}

// Stores are created with credentials; the jobs once writes carry ids and
// versions only. Every hash under the prefix is read back from Redis.
func TestPostgresBullMQJobDataCarriesNoSecret(t *testing.T) {
	db := pgtest.New(t)
	cfg := bullmqConfig(t, db.AppDSN)
	cfg.Dispatcher = true
	cfg.DispatchPollInterval = 50 * time.Millisecond
	s := apitest.Start(t, cfg, db)
	for i := range 3 {
		createStore(t, s, fmt.Sprintf("bullmq-secret-%d", i))
	}
	apitest.Eventually(t, 30*time.Second, "every event dispatched", func() bool {
		for _, e := range s.Events(t) {
			if e.Status != model.OutboxDispatched {
				return false
			}
		}
		return true
	})
	byID := map[string]model.OutboxEvent{}
	for _, e := range s.Events(t) {
		byID[e.ID.String()] = e
	}

	ctx := context.Background()
	rc := bullmqtest.Client(t, cfg.RedisURL)
	jobs := 0
	iter := rc.Scan(ctx, 0, cfg.BullMQPrefix+":*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		if rc.Type(ctx, key).Val() != "hash" {
			continue
		}
		fields := rc.HGetAll(ctx, key).Val()
		for f, v := range fields {
			for _, secret := range []string{testAPIKey, testAPISecret, apitest.SecretMarker} {
				assert.NotContains(t, v, secret, "%s field %s", key, f)
			}
		}
		data, isJob := fields["data"]
		if !isJob {
			continue
		}
		jobs++
		assert.NoError(t, model.CheckPayloadSafe([]byte(data)), "the payload guard passes the whole job data of %s", key)
		var d bullmq.Data
		require.NoError(t, json.Unmarshal([]byte(data), &d))
		ev, ok := byID[d.EventID.String()]
		require.True(t, ok, "job %s is an event of ours", key)
		assert.True(t, strings.HasSuffix(key, ":"+ev.ID.String()), "job id = event id")
		assert.JSONEq(t, string(ev.Payload), string(d.Payload), "the payload as the use case wrote it")
	}
	require.NoError(t, iter.Err())
	assert.Equal(t, 3, jobs)
}

// A queue a newer BullMQ set up stops the start with one line that says
// why, before any job is written.
func TestBullMQServeRefusesAQueueOfAnUnverifiedVersion(t *testing.T) {
	cfg := bullmqConfig(t, "")
	cfg.Dispatcher = true
	cfg.LogLevel = "info" // as in production: fx itself logs nothing
	rc := bullmqtest.Client(t, cfg.RedisURL)
	meta := cfg.BullMQPrefix + ":" + model.EventMediaProcess + ":meta"
	require.NoError(t, rc.HSet(context.Background(), meta, "version", "bullmq:7.1.0").Err())

	logs := &testkit.LogBuffer{}
	fxApp := fx.New(app.Serve(cfg, slog.New(slog.NewJSONHandler(logs, nil))))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := fxApp.Start(ctx)
	require.ErrorIs(t, err, bullmq.ErrUnverifiedLayout)
	_ = fxApp.Stop(ctx)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, "bullmq:7.1.0") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 1, "one line names the queue and the version")
	assert.Contains(t, lines[0], `queue \"media.process\"`)
	assert.Contains(t, lines[0], "verified with bullmq "+bullmq.VerifiedWith)
}

// An outage must not stop the service: with Redis down at start-up the
// check is deferred to the first job, and the service starts.
func TestBullMQServeStartsWhileRedisIsDown(t *testing.T) {
	cfg := apitest.Config("")
	cfg.Queue, cfg.Dispatcher, cfg.LogLevel = app.QueueBullMQ, true, "info"
	cfg.RedisURL = "redis://127.0.0.1:1/0"
	logs := &testkit.LogBuffer{}
	fxApp := fx.New(app.Serve(cfg, slog.New(slog.NewJSONHandler(logs, nil))))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, fxApp.Start(ctx))
	require.NoError(t, fxApp.Stop(ctx))
	assert.Contains(t, logs.String(), "cannot check the BullMQ queues at start-up")
}

func TestBullMQConfig(t *testing.T) {
	ok := apitest.Config("")
	ok.Queue = app.QueueBullMQ
	require.NoError(t, ok.Validate(), "the defaults are valid")
	require.NoError(t, fx.ValidateApp(app.Serve(ok, quiet)))
	onPostgres := ok
	onPostgres.DatabaseURL = "postgres://once_service@127.0.0.1:5432/once?sslmode=disable"
	require.NoError(t, fx.ValidateApp(app.Serve(onPostgres, quiet)))

	for name, mutate := range map[string]func(*app.Config){
		"ONCE_BULLMQ_PREFIX": func(c *app.Config) { c.BullMQPrefix = "" },
		"ONCE_BULLMQ_QUEUES": func(c *app.Config) { c.BullMQQueues = "a=b:c" },
		// once's own jobs are not BullMQ's to map
		"name webhook.deliver: once's own jobs":       func(c *app.Config) { c.BullMQQueues = "webhook.deliver=hooks" },
		"ONCE_BULLMQ_PRIORITIES name webhook.deliver": func(c *app.Config) { c.BullMQPriorities = "webhook.deliver=1" },
		"ONCE_BULLMQ_PRIORITIES":                      func(c *app.Config) { c.BullMQPriorities = "a=0x10" },
		"ONCE_BULLMQ_ATTEMPTS":                        func(c *app.Config) { c.BullMQAttempts = 0 },
		"ONCE_BULLMQ_BACKOFF":                         func(c *app.Config) { c.BullMQBackoff = -time.Second },
		"ONCE_BULLMQ_KEEP_COMPLETED_AGE":              func(c *app.Config) { c.BullMQKeepCompletedAge = c.DispatchLease },
		"ONCE_BULLMQ_KEEP_COMPLETED_COUNT":            func(c *app.Config) { c.BullMQKeepCompletedCount = 0 },
		"ONCE_BULLMQ_KEEP_FAILED_AGE":                 func(c *app.Config) { c.BullMQKeepFailedAge = 365 * 24 * time.Hour },
		"ONCE_BULLMQ_KEEP_FAILED_COUNT":               func(c *app.Config) { c.BullMQKeepFailedCount = 10_000_000 },
	} {
		c := ok
		mutate(&c)
		err := c.Validate()
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), name)
		}
	}
	c := ok
	c.Queue, c.BullMQAttempts = app.QueueRedis, 0
	assert.NoError(t, c.Validate(), "the BullMQ settings matter only with ONCE_QUEUE=bullmq")
}
