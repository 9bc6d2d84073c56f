package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

type transferPayload struct {
	model.JobOperation
	TransferID uuid.UUID `json:"transfer_id"`
}

func (p transferPayload) Task() uuid.UUID { return p.TransferID }

// cancelHarness runs transfers (a task kind with a row of its own) on the
// memory adapters, with a Call whose answers the test sets.
type cancelHarness struct {
	uow      ports.UnitOfWork
	ws       uuid.UUID
	failures *jobs.Failures
	handler  *jobs.Handler[transferPayload, struct{}, struct{}]
	calls    int
	callErr  error
}

func newCancelHarness(t *testing.T) *cancelHarness {
	h := &cancelHarness{uow: memory.NewUnitOfWork(memory.NewDB()), ws: uuid.New()}
	clock := system.NewClock()
	h.failures = jobs.NewFailures(h.uow, clock, nil, materials.Task.Kind())
	row := jobs.OnRow[transferPayload, model.MaterialTransfer, model.TaskStatus, struct{}, struct{}]{
		Task: materials.Task.TaskRow,
		Record: func(ctx context.Context, tx ports.Tx, _ *slog.Logger, tr model.MaterialTransfer, _ struct{}, now time.Time) error {
			tr.Status, tr.UpdatedAt = model.TaskSucceeded, now
			return materials.Task.Save(ctx, tx, tr)
		},
	}
	h.handler = jobs.NewHandler(jobs.Job[transferPayload, struct{}, struct{}]{
		Event: model.EventMaterialTransfer, Noun: "transfer", External: "source", Refused: "the source refused",
		Begin: row.Begin, End: row.End,
		Call: func(context.Context, *slog.Logger, jobs.Run[transferPayload], struct{}) (struct{}, error) {
			h.calls++
			return struct{}{}, h.callErr
		},
	}, h.uow, clock, nil)
	return h
}

// start writes a transfer, its pending operation and its event; it
// returns the message that delivers the job.
func (h *cancelHarness) start(t *testing.T) (ports.Message, model.Operation) {
	t.Helper()
	var op model.Operation
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		row := model.MaterialTransfer{TaskState: model.NewTaskState(uuid.New(), h.ws, time.Now())}
		var err error
		_, op, err = materials.Task.Begin(ctx, tx, system.NewIDs(), model.Principal{WorkspaceID: h.ws, UserID: uuid.New()}, row,
			jobs.Route{}, func(jo model.JobOperation) any { return transferPayload{JobOperation: jo, TransferID: row.ID} })
		return err
	}))
	return testkit.JobMessage(t, h.uow, h.ws, op.ID), op
}

func (h *cancelHarness) cancel(t *testing.T, id uuid.UUID) (model.Operation, error) {
	t.Helper()
	var op model.Operation
	err := h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		op, err = h.failures.Cancel(ctx, tx, id)
		return err
	})
	return op, err
}

// state reads op's operation, its transfer and its event.
func (h *cancelHarness) state(t *testing.T, op model.Operation) (model.Operation, model.MaterialTransfer, model.OutboxEvent) {
	t.Helper()
	var got model.Operation
	var tr model.MaterialTransfer
	var event model.OutboxEvent
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if got, err = tx.Operations().Get(ctx, op.ID); err != nil {
			return err
		}
		if tr, err = materials.Task.Get(ctx, tx, op.ResourceID); err != nil {
			return err
		}
		events, err := tx.Outbox().ForOperations(ctx, []model.Operation{op})
		event = events[op.ID]
		return err
	}))
	return got, tr, event
}

// A job cancelled before it started: operation cancelled, task failed with
// the reason, event withdrawn; its message, delivered all the same, calls
// nothing. A second cancel answers the same.
func TestCancelOfAPendingJob(t *testing.T) {
	h := newCancelHarness(t)
	msg, op := h.start(t)

	cancelled, err := h.cancel(t, op.ID)
	require.NoError(t, err)
	assert.Equal(t, model.OperationCancelled, cancelled.Status)
	got, tr, event := h.state(t, op)
	assert.Equal(t, cancelled, got)
	assert.Equal(t, model.TaskFailed, tr.Status)
	assert.Equal(t, jobs.ReasonCancelled, tr.Reason)
	assert.Equal(t, model.OutboxDispatched, event.Status, "withdrawn: nothing publishes it again")
	assert.Equal(t, jobs.ReasonCancelled, event.LastError)

	require.NoError(t, h.handler.Handle(context.Background(), msg), "a redelivered message does nothing")
	assert.Zero(t, h.calls)
	again, err := h.cancel(t, op.ID)
	require.NoError(t, err)
	assert.Equal(t, cancelled, again)
	got, _, _ = h.state(t, op)
	assert.Equal(t, model.OperationCancelled, got.Status)
}

// A running job's cancel is recorded; the job stops at its next start (a
// retry after a transient failure) without calling again, cancelled. A
// finished job's cancel is CodeOperationFinished.
func TestCancelOfARunningJobStopsItsNextAttempt(t *testing.T) {
	h := newCancelHarness(t)
	msg, op := h.start(t)
	h.callErr = domain.Errorf(domain.CodeUnavailable, "source timeout")
	require.Error(t, h.handler.Handle(context.Background(), msg), "a transient failure: to be retried")
	require.Equal(t, 1, h.calls)

	requested, err := h.cancel(t, op.ID)
	require.NoError(t, err)
	assert.Equal(t, model.OperationRunning, requested.Status)
	assert.True(t, requested.CancelRequested())
	again, err := h.cancel(t, op.ID)
	require.NoError(t, err)
	assert.Equal(t, requested, again, "a second cancel answers the same")

	h.callErr = nil
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.calls, "the retry stopped before calling again")
	got, tr, _ := h.state(t, op)
	assert.Equal(t, model.OperationCancelled, got.Status)
	assert.Equal(t, requested.CancelRequestedAt, got.CancelRequestedAt)
	assert.Equal(t, model.TaskFailed, tr.Status)
	assert.Equal(t, jobs.ReasonStopped, tr.Reason)

	msg, op = h.start(t)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	_, err = h.cancel(t, op.ID)
	assert.True(t, domain.IsCode(err, domain.CodeOperationFinished), "%v", err)
	got, _, _ = h.state(t, op)
	assert.Equal(t, model.OperationSucceeded, got.Status)

	_, err = h.cancel(t, uuid.New())
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "%v", err)
}

// A kind that can stop midway (Job.Stop): a cancel while its call runs
// cancels the call's context, and the job ends cancelled.
func TestCancelStopsARunningCallOfAKindThatCanStop(t *testing.T) {
	h := newCancelHarness(t)
	calling, stop := make(chan struct{}), make(chan error, 1)
	row := jobs.OnRow[transferPayload, model.MaterialTransfer, model.TaskStatus, struct{}, struct{}]{Task: materials.Task.TaskRow}
	handler := jobs.NewHandler(jobs.Job[transferPayload, struct{}, struct{}]{
		Event: model.EventMaterialTransfer, Noun: "transfer", External: "source", Refused: "the source refused",
		Begin: row.Begin, End: row.End, Stop: row.Stop,
		Call: func(ctx context.Context, _ *slog.Logger, _ jobs.Run[transferPayload], _ struct{}) (struct{}, error) {
			close(calling)
			<-ctx.Done() // a long read, until the cancel
			stop <- context.Cause(ctx)
			return struct{}{}, ctx.Err()
		},
	}, h.uow, system.NewClock(), nil).WithCancelPoll(time.Millisecond)
	msg, op := h.start(t)
	handled := make(chan error, 1)
	go func() { handled <- handler.Handle(context.Background(), msg) }()
	<-calling

	requested, err := h.cancel(t, op.ID)
	require.NoError(t, err)
	assert.Equal(t, model.OperationRunning, requested.Status, "running: the cancel is a request")
	require.NoError(t, <-handled, "stopped and recorded: nothing to retry")
	assert.Error(t, <-stop)
	got, tr, _ := h.state(t, op)
	assert.Equal(t, model.OperationCancelled, got.Status)
	assert.Equal(t, model.TaskFailed, tr.Status)
	assert.Equal(t, jobs.ReasonStopped, tr.Reason)
}

// endsHeard records what the unit of work announces (ports.OperationEnds).
type endsHeard struct {
	mu  sync.Mutex
	ids []uuid.UUID
}

func (e *endsHeard) Ended(ids ...uuid.UUID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ids = append(e.ids, ids...)
}

func (e *endsHeard) Listen(ports.OperationEndListener) {}

func (e *endsHeard) heard() []uuid.UUID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ids)
}

// A cancel is an end like any other: the unit of work announces it after
// its commit (operations.AnnounceEnds), so waiting reads answer at once. A
// request to a running job ends nothing, and announces nothing.
func TestCancelIsAnnouncedAsAnEnd(t *testing.T) {
	h := newCancelHarness(t)
	var ends endsHeard
	h.uow = operations.AnnounceEnds(h.uow, &ends)
	_, pending := h.start(t)
	msg, running := h.start(t)
	h.callErr = domain.Errorf(domain.CodeUnavailable, "source timeout")
	require.Error(t, jobs.NewHandler(jobs.Job[transferPayload, struct{}, struct{}]{
		Event: model.EventMaterialTransfer, Noun: "transfer", External: "source", Refused: "the source refused",
		Begin: jobs.OnRow[transferPayload, model.MaterialTransfer, model.TaskStatus, struct{}, struct{}]{Task: materials.Task.TaskRow}.Begin,
		Call: func(context.Context, *slog.Logger, jobs.Run[transferPayload], struct{}) (struct{}, error) {
			return struct{}{}, h.callErr
		},
	}, h.uow, system.NewClock(), nil).Handle(context.Background(), msg), "started, then a transient failure")

	_, err := h.cancel(t, pending.ID)
	require.NoError(t, err)
	_, err = h.cancel(t, running.ID)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{pending.ID}, ends.heard())
}

// A cancel is pushed like any other end: in the cancel's transaction, one
// operation.cancelled delivery per endpoint subscribed to it.
func TestCancelIsPushedToSubscribedWebhooks(t *testing.T) {
	h := newCancelHarness(t)
	now := time.Now()
	subscribed := model.WebhookEndpoint{ID: uuid.New(), WorkspaceID: h.ws, URL: "https://hooks.example/once",
		EventTypes: []string{model.WebhookOperationCancelled}, Enabled: true, SecretVersion: 1, SealedSecret: []byte("sealed"),
		CreatedAt: now, UpdatedAt: now}
	other := subscribed
	other.ID, other.EventTypes = uuid.New(), []string{model.WebhookOperationSucceeded}
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		endpoints := ports.Repository[ports.WebhookEndpointRepository](tx)
		return errors.Join(endpoints.Create(ctx, subscribed), endpoints.Create(ctx, other))
	}))
	_, op := h.start(t)
	_, err := h.cancel(t, op.ID)
	require.NoError(t, err)

	deliveries := func(endpoint uuid.UUID) []model.OutboxEvent {
		var out []model.OutboxEvent
		require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
			var err error
			out, err = tx.Outbox().Undelivered(ctx, model.WebhookDestination(endpoint), ports.ListQuery{Limit: 10})
			return err
		}))
		return out
	}
	got := deliveries(subscribed.ID)
	require.Len(t, got, 1)
	var d model.WebhookDelivery
	require.NoError(t, json.Unmarshal([]byte(got[0].Payload), &d))
	assert.Equal(t, model.WebhookOperationCancelled, d.Event.Type)
	assert.Equal(t, op.ID, d.Event.Data.OperationID)
	assert.Empty(t, deliveries(other.ID), "an endpoint not subscribed to cancels gets none")
}
