package dispatch_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

// clock is a test clock that only moves when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// recorder is a Publisher that keeps every message it accepted, and fails
// while fail says so.
type recorder struct {
	mu       sync.Mutex
	accepted []ports.Message
	calls    int
	// fail, when set, decides each call; a non-nil error refuses the whole
	// call.
	fail func(msgs []ports.Message) error
}

func (r *recorder) Publish(_ context.Context, msgs ...ports.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail != nil {
		if err := r.fail(msgs); err != nil {
			return err
		}
	}
	r.accepted = append(r.accepted, msgs...)
	return nil
}

func (r *recorder) setFail(f func([]ports.Message) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = f
}

// countByID counts how often each message id was accepted.
func (r *recorder) countByID() map[uuid.UUID]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[uuid.UUID]int{}
	for _, m := range r.accepted {
		n[m.ID]++
	}
	return n
}

func (r *recorder) countByWorkspace() map[uuid.UUID]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[uuid.UUID]int{}
	for _, m := range r.accepted {
		n[m.WorkspaceID]++
	}
	return n
}

// env is a memory database with a clock.
type env struct {
	db    *memory.DB
	uow   ports.UnitOfWork
	disc  ports.OutboxDiscovery
	clock *clock
	logs  *testkit.LogBuffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := memory.NewDB()
	return &env{db: db, uow: memory.NewUnitOfWork(db), disc: memory.NewOutboxDiscovery(db), clock: newClock(), logs: &testkit.LogBuffer{}}
}

func (e *env) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (e *env) dispatcher(t *testing.T, cfg dispatch.Config, pub ports.Publisher) *dispatch.Dispatcher {
	t.Helper()
	if cfg.Owner == "" {
		cfg.Owner = "dispatcher-1"
	}
	d, err := dispatch.New(cfg, dispatch.Deps{
		UnitOfWork: e.uow, Discovery: e.disc, Publisher: pub, Clock: e.clock, Logger: e.logger(),
	})
	require.NoError(t, err)
	return d
}

// payload is an event payload of ids only.
type payload struct {
	N int `json:"n"`
}

// appendEvents commits n events to ws in one transaction and returns their
// ids.
func (e *env) appendEvents(t *testing.T, ws uuid.UUID, n int) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	events := make([]model.OutboxEvent, n)
	for i := range n {
		ids[i] = uuid.Must(uuid.NewV7())
		ev, err := model.NewOutboxEvent(ids[i], ws, "test.event", "thing", uuid.New(), payload{N: i}, e.clock.Now())
		require.NoError(t, err)
		ev.Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		events[i] = ev
	}
	require.NoError(t, e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, events...)
	}))
	return ids
}

func (e *env) event(t *testing.T, ws, id uuid.UUID) model.OutboxEvent {
	t.Helper()
	var ev model.OutboxEvent
	require.NoError(t, e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		ev, err = tx.Outbox().Get(ctx, id)
		return err
	}))
	return ev
}

// waitIDs waits until every event of ws named in ids passes check.
func (e *env) waitIDs(t *testing.T, ws uuid.UUID, ids []uuid.UUID, check func(model.OutboxEvent) bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if !check(e.event(t, ws, id)) {
				return false
			}
		}
		return true
	}, 30*time.Second, time.Millisecond)
}

// postgresEnv is e on a database of its own, with workspace ws.
func postgresEnv(t *testing.T) (*env, *postgres.UnitOfWork, uuid.UUID) {
	db := pgtest.New(t)
	e := newEnv(t)
	uow := postgres.NewUnitOfWork(db.App)
	e.uow, e.disc = uow, postgres.NewOutboxDiscovery(db.App)
	ws := uuid.New()
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "waits", CreatedAt: e.clock.Now()})
	}))
	return e, uow, ws
}
