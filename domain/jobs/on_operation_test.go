package jobs_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// readCounting is a unit of work that counts the operations read by id.
type readCounting struct {
	ports.UnitOfWork
	reads *atomic.Int32
}

func (u readCounting) Transact(ctx context.Context, ws uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	return u.UnitOfWork.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		return fn(ctx, readCountingTx{Tx: tx, reads: u.reads})
	})
}

type readCountingTx struct {
	ports.Tx
	reads *atomic.Int32
}

func (t readCountingTx) Operations() ports.OperationRepository {
	return readCountingOperations{OperationRepository: t.Tx.Operations(), reads: t.reads}
}

type readCountingOperations struct {
	ports.OperationRepository
	reads *atomic.Int32
}

func (o readCountingOperations) Get(ctx context.Context, id uuid.UUID) (model.Operation, error) {
	o.reads.Add(1)
	return o.OperationRepository.Get(ctx, id)
}

// operationJob is one pending operation of kind test.op with the outbox
// event of its job, and a handler over it (jobs.OnOperation) whose call
// runs during, and whose Record writes what it recorded.
type operationJob struct {
	uow      ports.UnitOfWork
	reads    *atomic.Int32
	op       model.Operation
	event    model.OutboxEvent
	handler  *jobs.Handler[testPayload, string, string]
	recorded []string
}

func newOperationJob(t *testing.T, during func()) *operationJob {
	t.Helper()
	j := &operationJob{reads: &atomic.Int32{}}
	j.uow = readCounting{UnitOfWork: memory.NewUnitOfWork(memory.NewDB()), reads: j.reads}
	at := time.Now().UTC().Truncate(time.Microsecond)
	ws := uuid.New()
	j.op = model.Operation{ID: uuid.New(), WorkspaceID: ws, Kind: "test.op", Status: model.OperationPending,
		ResourceType: "test", ResourceID: uuid.New(), CreatedBy: uuid.New(), CreatedAt: at, UpdatedAt: at}
	var err error
	j.event, err = model.NewOutboxEvent(uuid.New(), ws, "test.job", "test", j.op.ResourceID,
		testPayload{OperationID: j.op.ID, TaskID: j.op.ResourceID}, at)
	require.NoError(t, err)
	require.NoError(t, j.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Operations().Create(ctx, j.op); err != nil {
			return err
		}
		return tx.Outbox().Append(ctx, j.event)
	}))
	steps := jobs.OnOperation[testPayload, string, string]{
		Kind: "test.op",
		Check: func(context.Context, ports.Tx, *slog.Logger, jobs.Run[testPayload], model.Operation, time.Time) (string, bool, error) {
			return "row", false, nil
		},
		Record: func(_ context.Context, _ ports.Tx, _ *slog.Logger, row, out, reason string, _ time.Time) error {
			j.recorded = append(j.recorded, row+" "+out+reason)
			return nil
		},
	}
	j.handler = jobs.NewHandler(jobs.Job[testPayload, string, string]{
		Event: "test.job", Noun: "test", External: "system", Refused: "refused",
		Begin: steps.Begin, End: steps.End,
		Call: func(context.Context, *slog.Logger, jobs.Run[testPayload], string) (string, error) {
			during()
			return "called", nil
		},
	}, j.uow, fixedClock(at.Add(time.Second)), nil)
	return j
}

func (j *operationJob) operation(t *testing.T) model.Operation {
	t.Helper()
	op, err := ports.Query(t.Context(), j.uow, j.op.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.Operation, error) {
		return tx.Operations().Get(ctx, j.op.ID)
	})
	require.NoError(t, err)
	return op
}

// A job over an operation reads its operation once, in step 1: step 3
// records the outcome over the operation step 1 committed running, and
// the operation's update is what refuses an end recorded meanwhile.
func TestAJobOverAnOperationReadsItOnce(t *testing.T) {
	j := newOperationJob(t, func() {})
	require.NoError(t, j.handler.Handle(t.Context(), ports.MessageOf(j.event)))
	require.Equal(t, int32(1), j.reads.Load(), "operation reads")
	require.Equal(t, []string{"row called"}, j.recorded)
	require.Equal(t, model.OperationSucceeded, j.operation(t).Status)
}

// An operation ended while the call ran (a concurrent delivery's outcome)
// stands: this delivery's outcome is dropped (its transaction rolled
// back by the operation's update) and the delivery ends without an error.
func TestAJobOverAnOperationEndedDuringItsCallDropsItsOutcome(t *testing.T) {
	var j *operationJob
	j = newOperationJob(t, func() {
		require.NoError(t, j.uow.Transact(t.Context(), j.op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			op, err := tx.Operations().Get(ctx, j.op.ID)
			if err != nil {
				return err
			}
			op.Fail("ended by a twin", time.Now())
			return tx.Operations().Update(ctx, op)
		}))
	})
	require.NoError(t, j.handler.Handle(t.Context(), ports.MessageOf(j.event)))
	op := j.operation(t)
	require.Equal(t, model.OperationFailed, op.Status)
	require.Equal(t, "ended by a twin", op.Error)
}

// A job whose message has no ordering key runs under a ctx that says so
// (domain.UnorderedJob): its end frees no follower, so it wakes no
// Dispatcher (dispatch.WakeOnEnds). A keyed job's does not.
func TestAJobWithoutAnOrderingKeyRunsUnordered(t *testing.T) {
	var unordered []bool
	j := newOperationJob(t, func() {})
	h := jobs.NewHandler(jobs.Job[testPayload, string, string]{
		Event: "test.job", Noun: "test",
		Begin: func(ctx context.Context, _ ports.Tx, _ *slog.Logger, _ jobs.Run[testPayload], _ time.Time) (string, bool, error) {
			unordered = append(unordered, domain.UnorderedJob(ctx))
			return "", false, nil
		},
	}, j.uow, fixedClock(time.Now()), nil)
	msg := ports.MessageOf(j.event)
	require.NoError(t, h.Handle(t.Context(), msg))
	msg.OrderingKey = "product-1"
	require.NoError(t, h.Handle(t.Context(), msg))
	require.Equal(t, []bool{true, false}, unordered)
}
