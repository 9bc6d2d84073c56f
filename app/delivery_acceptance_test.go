package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/redistest"
)

// publisherFunc adapts a function to ports.Publisher.
type publisherFunc func(ctx context.Context, msgs ...ports.Message) error

func (f publisherFunc) Publish(ctx context.Context, msgs ...ports.Message) error {
	return f(ctx, msgs...)
}

func createStore(t *testing.T, s *apitest.Server, shop string) storeCreated {
	t.Helper()
	r := s.Do(t, "POST", "/v1/stores", storeBody(shop), map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var c storeCreated
	r.JSON(t, &c)
	return c
}

// actAs makes s call the API as other's user in other's workspace (both run
// on one database with one token secret).
func actAs(s, other *apitest.Server) {
	s.Workspace, s.User, s.Token = other.Workspace, other.User, other.Token
}

// countDeliveries wraps every worker handler to count deliveries per event id.
func countDeliveries(counts *sync.Map) fx.Option {
	return fx.Decorate(func(h app.Handlers) app.Handlers {
		out := app.Handlers{}
		for eventType, handler := range h {
			out[eventType] = ports.MessageHandlerFunc(func(ctx context.Context, msg ports.Message) error {
				n, _ := counts.LoadOrStore(msg.ID, new(atomic.Int32))
				n.(*atomic.Int32).Add(1)
				return handler.Handle(ctx, msg)
			})
		}
		return out
	})
}

func deliveries(counts *sync.Map, id uuid.UUID) int {
	n, ok := counts.Load(id)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

// The API commits, then its process exits before any Dispatcher ran. A
// Dispatcher started later finds the event in PostgreSQL and delivers it.
func TestPostgresEventCommittedBeforeACrashIsDeliveredLater(t *testing.T) {
	db := pgtest.New(t)
	api := apitest.Start(t, apitest.Config(db.AppDSN), db) // no Dispatcher, no worker
	created := createStore(t, api, "crash-before-publish")
	events := api.Events(t)
	require.Len(t, events, 1)
	require.Equal(t, model.OutboxPending, events[0].Status)
	api.Stop()

	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, true
	later := apitest.Start(t, cfg, db)
	actAs(later, api)
	op := later.WaitOperation(t, created.Operation.ID, 30*time.Second)
	assert.Equal(t, "succeeded", op.Status, op.Error)
	assert.Equal(t, 1, later.Sim.EffectCount())
	apitest.Eventually(t, 10*time.Second, "the event marked dispatched", func() bool {
		return later.Events(t)[0].Status == model.OutboxDispatched
	})
}

// The broker accepted the message but the Dispatcher died before marking
// it. After the lease another Dispatcher publishes it again; the worker
// receives it twice and the platform acts once.
func TestPostgresPublishedButUnmarkedEventIsRedeliveredWithoutASecondEffect(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Worker = app.QueueAMQP, true
	var pub ports.Publisher
	var disc ports.OutboxDiscovery
	var counts sync.Map
	s := apitest.Start(t, cfg, db, fx.Populate(&pub, &disc), countDeliveries(&counts))
	created := createStore(t, s, "died-before-mark")
	eventID := s.Events(t)[0].ID

	publishAndDie(t, s, disc, pub)

	op := s.WaitOperation(t, created.Operation.ID, 30*time.Second)
	require.Equal(t, "succeeded", op.Status, op.Error)
	ev := s.Events(t)[0]
	require.Equal(t, model.OutboxDispatching, ev.Status, "never marked")
	require.Equal(t, "dispatcher-a", ev.LockedBy)

	republishAfterLease(t, s, disc, pub, 1)
	assert.Equal(t, model.OutboxDispatched, s.Events(t)[0].Status)
	apitest.Eventually(t, 30*time.Second, "the duplicate delivery", func() bool { return deliveries(&counts, eventID) == 2 })
	assert.Equal(t, 1, s.Sim.EffectCount(), "the duplicate caused no second platform effect")
	assert.Equal(t, "succeeded", s.WaitOperation(t, created.Operation.ID, time.Second).Status)
}

// Redis goes away for a while (a real outage: the connection is cut and
// refused). With the default attempts and backoff, the events wait without
// spending any (the Dispatcher's breaker opens: once_dispatch_broker_up
// reads 0), and are all delivered once it is back.
func TestPostgresBrokerOutageBacksOffAndLosesNothing(t *testing.T) {
	db := pgtest.New(t)
	proxy := faultproxy.Start(t, "127.0.0.1:6379")
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher = app.QueueRedis, true
	cfg.RedisURL = "redis://" + proxy.Addr() + "/0"
	cfg.DispatchBreakerOpen = 200 * time.Millisecond // probe often: the test waits for the recovery
	cfg.DispatchPollInterval = 100 * time.Millisecond
	api := apitest.Start(t, cfg, db)

	workerCfg := apitest.Config(db.AppDSN)
	workerCfg.Queue, workerCfg.Worker, workerCfg.QueuePrefix = app.QueueRedis, true, cfg.QueuePrefix
	worker := apitest.Start(t, workerCfg, db)

	proxy.Down()
	var ops []uuid.UUID
	for i := range 5 {
		ops = append(ops, createStore(t, api, fmt.Sprintf("outage-%d", i)).Operation.ID)
	}
	apitest.Eventually(t, 20*time.Second, "every event tried, waiting, no attempt spent, the broker reported down", func() bool {
		for _, e := range api.Events(t) {
			if e.Status != model.OutboxPending || e.LastError == "" {
				return false
			}
		}
		return strings.Contains(api.Metrics(t), "once_dispatch_broker_up 0")
	})
	for _, e := range api.Events(t) {
		assert.Zero(t, e.AttemptCount, "event %s: %s", e.ID, e.LastError)
		assert.Contains(t, e.LastError, "unreachable")
	}
	proxy.Up(t)

	for _, id := range ops {
		op := api.WaitOperation(t, id, 60*time.Second)
		assert.Equal(t, "succeeded", op.Status, op.Error)
	}
	apitest.Eventually(t, 10*time.Second, "all events dispatched", func() bool {
		for _, e := range api.Events(t) {
			if e.Status != model.OutboxDispatched {
				return false
			}
		}
		return true
	})
	for _, e := range api.Events(t) {
		assert.Zero(t, e.AttemptCount, "event %s", e.ID)
	}
	assert.Contains(t, api.Metrics(t), "once_dispatch_broker_up 1")
	assert.Equal(t, 5, worker.Sim.EffectCount())
}

// An event that always fails ends in dead_letter with a sanitized error;
// an admin sees it and re-drives it once the cause is fixed.
func TestPostgresAlwaysFailingEventIsDeadLetteredAndRedriven(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Dispatcher, cfg.Worker = true, true
	cfg.DispatchMaxAttempts, cfg.DispatchBackoffBase, cfg.DispatchBackoffMax = 3, 10*time.Millisecond, 50*time.Millisecond
	cfg.DispatchPollInterval = 50 * time.Millisecond
	var broken atomic.Bool
	broken.Store(true)
	s := apitest.Start(t, cfg, db, fx.Decorate(func(p ports.Publisher) ports.Publisher {
		return publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
			if broken.Load() {
				return errors.New("broker refused: amqp://once:hunter2@mq:5672/ password=hunter2 token=abc123")
			}
			return p.Publish(ctx, msgs...)
		})
	}))
	created := createStore(t, s, "dead-letter")
	apitest.Eventually(t, 20*time.Second, "dead letter", func() bool {
		return s.Events(t)[0].Status == model.OutboxDeadLetter
	})
	ev := s.Events(t)[0]
	assert.Equal(t, 3, ev.AttemptCount)
	assert.NotEmpty(t, ev.LastError)
	for _, secret := range []string{"hunter2", "abc123"} {
		assert.NotContains(t, ev.LastError, secret)
	}

	// The user sees why the operation stays pending.
	d := operationDelivery(t, s, created.Operation.ID)
	assert.Equal(t, "pending", d.OperationStatus)
	require.NotNil(t, d.Delivery)
	assert.Equal(t, "dead_letter", d.Delivery.Status)
	assert.Equal(t, 3, d.Delivery.Attempts)
	assert.Equal(t, ev.LastError, d.Delivery.LastError)
	assert.Nil(t, d.Delivery.NextAttemptAt, "no attempt is due for a dead letter")

	list := s.Do(t, "GET", "/v1/outbox/dead-letters", nil, nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Body))
	var dl struct {
		Items []struct {
			ID        uuid.UUID `json:"id"`
			LastError string    `json:"last_error"`
		} `json:"items"`
	}
	list.JSON(t, &dl)
	require.Len(t, dl.Items, 1)
	assert.Equal(t, ev.ID, dl.Items[0].ID)
	assert.NotContains(t, string(list.Body), "hunter2")

	member := uuid.New()
	require.NoError(t, s.WS.EnsureMember(context.Background(), s.Workspace, member, model.RoleMember))
	notAdmin := s.Do(t, "POST", "/v1/outbox/dead-letters/redrive", nil, map[string]string{"Authorization": "Bearer " + s.TokenFor(t, s.Workspace, member)})
	require.Equal(t, http.StatusForbidden, notAdmin.Status)

	metrics := s.Metrics(t)
	assert.Contains(t, metrics, `once_outbox_events{status="dead_letter"} 1`)
	assert.Contains(t, metrics, "once_dispatch_dead_lettered_total 1")
	assert.Equal(t, http.StatusNotFound, s.Do(t, "GET", "/metrics", nil, nil).Status, "metrics are on the ops listener only")

	broken.Store(false)
	redrive := s.Do(t, "POST", "/v1/outbox/dead-letters/"+ev.ID.String()+"/redrive", nil, nil)
	require.Equal(t, http.StatusOK, redrive.Status, string(redrive.Body))
	assert.JSONEq(t, `{"redriven":1}`, string(redrive.Body))
	op := s.WaitOperation(t, created.Operation.ID, 30*time.Second)
	assert.Equal(t, "succeeded", op.Status, op.Error)
	again := s.Do(t, "POST", "/v1/outbox/dead-letters/"+ev.ID.String()+"/redrive", nil, nil)
	assert.JSONEq(t, `{"redriven":0}`, string(again.Body), "re-driving twice is harmless")
	assert.Equal(t, 1, s.Sim.EffectCount())
}

// recording records who published which event, in order.
type recording struct {
	mu    sync.Mutex
	byID  map[uuid.UUID][]string
	order []uuid.UUID // workspace of each publish, in order
	next  ports.Publisher
}

func (r *recording) as(owner string) ports.Publisher {
	return publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
		if err := r.next.Publish(ctx, msgs...); err != nil {
			return err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, m := range msgs {
			r.byID[m.ID] = append(r.byID[m.ID], owner)
			r.order = append(r.order, m.WorkspaceID)
		}
		return nil
	})
}

// Three Dispatchers share 10,000 events over 20 workspaces, one of them
// holding almost half: everything is delivered, nothing twice within the
// lease, and the small workspaces are not held back by the big one.
func TestPostgresThreeDispatchersDrainTenThousandEventsFairly(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	var disc ports.OutboxDiscovery
	s := apitest.Start(t, cfg, db, fx.Populate(&disc))
	ctx := context.Background()

	redistest.DeleteKeysLater(t, "redis://127.0.0.1:6379/0", cfg.QueuePrefix)
	raw, err := redisstream.NewPublisher(redisstream.Config{URL: "redis://127.0.0.1:6379/0"}, quiet)
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	rec := &recording{byID: map[uuid.UUID][]string{}, next: queue.NewPublisher(raw, cfg.QueuePrefix)}

	const total, nWorkspaces, bigShare = 10000, 20, 4300
	workspaces := make([]uuid.UUID, nWorkspaces)
	for i := range workspaces {
		workspaces[i] = uuid.New()
		if i == 0 {
			// The big workspace sorts first, so an unfair Dispatcher would
			// drain it before anyone else.
			workspaces[i] = uuid.MustParse("00000000-0000-4000-8000-" + uuid.NewString()[24:])
		}
		_, err := s.WS.Create(ctx, workspaces[i], fmt.Sprintf("ws-%d", i), uuid.New())
		require.NoError(t, err)
	}
	big := workspaces[0]
	perSmall := (total - bigShare) / (nWorkspaces - 1)
	clock := system.NewClock()
	for i, ws := range workspaces {
		n := perSmall
		if i == 0 {
			n = bigShare
		}
		for start := 0; start < n; start += 500 {
			err := s.UoW.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
				var evs []model.OutboxEvent
				for j := start; j < min(start+500, n); j++ {
					ev, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, "test.noop", "test", uuid.New(), map[string]int{"n": j}, clock.Now())
					if err != nil {
						return err
					}
					evs = append(evs, ev)
				}
				return tx.Outbox().Append(ctx, evs...)
			})
			require.NoError(t, err)
		}
	}
	loaded := bigShare + perSmall*(nWorkspaces-1)

	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range 3 {
		owner := fmt.Sprintf("dispatcher-%d", i+1)
		d, err := dispatch.New(dispatch.Config{Owner: owner, Batch: 100, Lease: time.Minute, PollInterval: 50 * time.Millisecond},
			dispatch.Deps{UnitOfWork: s.UoW, Discovery: disc, Publisher: rec.as(owner), Clock: clock})
		require.NoError(t, err)
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(runCtx) }()
	}
	apitest.Eventually(t, 3*time.Minute, "every event dispatched", func() bool {
		st, err := disc.Stats(ctx, clock.Now())
		require.NoError(t, err)
		return st.ByStatus[model.OutboxDispatched] == int64(loaded)
	})
	stop()
	wg.Wait()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.byID, loaded, "every event published")
	for id, owners := range rec.byID {
		if len(owners) != 1 {
			t.Fatalf("event %s published by %v within one lease", id, owners)
		}
	}
	// Fairness: by the time the big workspace had half of its events out,
	// every small workspace was already drained.
	bigSeen, smallLeft := 0, map[uuid.UUID]int{}
	for _, ws := range workspaces[1:] {
		smallLeft[ws] = perSmall
	}
	for _, ws := range rec.order {
		if ws == big {
			bigSeen++
			if bigSeen == bigShare/2 {
				break
			}
			continue
		}
		if smallLeft[ws]--; smallLeft[ws] == 0 {
			delete(smallLeft, ws)
		}
	}
	assert.Empty(t, smallLeft, "small workspaces still waiting when the big one was half done")
}

// The memory configuration runs the whole flow: API, outbox, Dispatcher,
// memory queue, worker, simulated platform.
func TestMemoryWholeFlow(t *testing.T) {
	cfg := apitest.Config("")
	cfg.Dispatcher, cfg.Worker = true, true
	delivered := make(chan ports.Message, 10)
	s := apitest.Start(t, cfg, nil, fx.Decorate(func(h app.Handlers) app.Handlers {
		next := h[model.EventStoreCredentialsVerify]
		h[model.EventStoreCredentialsVerify] = ports.MessageHandlerFunc(func(ctx context.Context, msg ports.Message) error {
			delivered <- msg
			return next.Handle(ctx, msg)
		})
		return h
	}))
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r0 := s.Do(t, "POST", "/v1/stores", storeBody("memory-ok"), map[string]string{"Idempotency-Key": key(), "traceparent": traceparent})
	require.Equal(t, http.StatusCreated, r0.Status, string(r0.Body))
	var ok storeCreated
	r0.JSON(t, &ok)
	op := s.WaitOperation(t, ok.Operation.ID, 10*time.Second)
	assert.Equal(t, "succeeded", op.Status, op.Error)
	msg := <-delivered
	assert.Equal(t, s.Workspace, msg.WorkspaceID)
	assert.Equal(t, model.EventStoreCredentialsVerify, msg.Type)
	assert.Equal(t, traceparent, msg.Traceparent, "the request's trace context reaches the worker")
	assert.Equal(t, s.Events(t)[0].ID, msg.ID, "the event id is the message id")
	store := s.Do(t, "GET", "/v1/stores/"+ok.Store.ID.String(), nil, nil)
	assert.Contains(t, string(store.Body), `"status":"verified"`)

	body := storeBody("memory-rejected")
	body["credentials"] = map[string]any{"api_key": "invalid", "api_secret": testAPISecret}
	r := s.Do(t, "POST", "/v1/stores", body, map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var rejected storeCreated
	r.JSON(t, &rejected)
	failed := s.WaitOperation(t, rejected.Operation.ID, 10*time.Second)
	assert.Equal(t, "failed", failed.Status)
	assert.NotEmpty(t, failed.Error)
	assert.NotContains(t, failed.Error, testAPISecret)
	assert.Equal(t, 2, s.Sim.EffectCount())

	// The metrics tell the refused credentials (the job ran, its operation
	// failed) from the verified ones. The worker counts a job once its
	// handler returned, which may be after the operation reads failed.
	apitest.Eventually(t, 10*time.Second, "both jobs counted", func() bool {
		m := s.Metrics(t)
		return strings.Contains(m, `once_worker_jobs_total{outcome="succeeded",type="store.credentials.verify"} 1`) &&
			strings.Contains(m, `once_worker_jobs_total{outcome="failed",type="store.credentials.verify"} 1`)
	})

	assert.False(t, strings.Contains(s.Logs.String(), testAPISecret), "no credential in any log line")
}
