package operations_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/ports"
)

type waitResult struct {
	op  model.Operation
	err error
}

// waitSetup is the service as the app wires it on the embedded store:
// ends announced after commit, waiters capped at max in all and
// perWorkspace per workspace.
func waitSetup(max, perWorkspace int) (ports.UnitOfWork, *operations.Waiters, *operations.Service) {
	signal := memory.NewSignal()
	uow := operations.AnnounceEnds(memory.NewUnitOfWork(memory.NewDB()), signal)
	waiters := operations.NewWaiters(signal, max, perWorkspace)
	return uow, waiters, operations.NewService(uow).WithWaiters(waiters)
}

// startWait waits in the background and returns where its answer comes,
// once the waiter waits (n waiters in all).
func startWait(t *testing.T, svc *operations.Service, w *operations.Waiters, p model.Principal, id uuid.UUID, n int) <-chan waitResult {
	t.Helper()
	return startWaitCtx(t, context.Background(), svc, w, p, id, n)
}

func startWaitCtx(t *testing.T, ctx context.Context, svc *operations.Service, w *operations.Waiters, p model.Principal, id uuid.UUID, n int) <-chan waitResult {
	t.Helper()
	out := make(chan waitResult, 1)
	go func() {
		op, err := svc.Wait(ctx, p, id, operations.MaxWait)
		out <- waitResult{op, err}
	}()
	require.Eventually(t, func() bool { return w.Waiting() == n }, 10*time.Second, time.Millisecond, "waiter registered")
	return out
}

func answer(t *testing.T, ch <-chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(2 * operations.MaxWait):
		t.Fatal("no answer")
		return waitResult{}
	}
}

func TestWaitAnswersWhenTheOperationEnds(t *testing.T) {
	uow, waiters, svc := waitSetup(0, 0)
	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	op := seed(t, uow, p.WorkspaceID, 1)[0]
	require.Equal(t, model.OperationPending, op.Status)
	ch := startWait(t, svc, waiters, p, op.ID, 1)

	// A change that is no end wakes no one for good: still waiting.
	op.Start(time.Now())
	require.NoError(t, uow.Transact(context.Background(), p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Operations().Update(ctx, op)
	}))
	select {
	case r := <-ch:
		t.Fatalf("answered before the end: %+v", r)
	default:
	}

	op.Succeed(time.Now())
	require.NoError(t, uow.Transact(context.Background(), p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Operations().Update(ctx, op)
	}))
	r := answer(t, ch)
	require.NoError(t, r.err)
	assert.Equal(t, model.OperationSucceeded, r.op.Status)
	require.Eventually(t, func() bool { return waiters.Waiting() == 0 }, 10*time.Second, time.Millisecond, "waiter gone")
}

func TestWaitAnswersAtOnceForAFinishedOrMissingOperation(t *testing.T) {
	uow, waiters, svc := waitSetup(0, 0)
	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	done := seed(t, uow, p.WorkspaceID, 2)[1]
	require.Equal(t, model.OperationSucceeded, done.Status)

	op, err := svc.Wait(context.Background(), p, done.ID, operations.MaxWait)
	require.NoError(t, err)
	assert.Equal(t, model.OperationSucceeded, op.Status)

	_, err = svc.Wait(context.Background(), p, uuid.New(), operations.MaxWait)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
	assert.Zero(t, waiters.Waiting())
}

func TestWaitEndsWithItsTimeOrTheCaller(t *testing.T) {
	uow, waiters, svc := waitSetup(0, 0)
	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	op := seed(t, uow, p.WorkspaceID, 1)[0]

	got, err := svc.Wait(context.Background(), p, op.ID, time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, model.OperationPending, got.Status, "the state when the wait is over")

	ctx, cancel := context.WithCancel(context.Background())
	ch := startWaitCtx(t, ctx, svc, waiters, p, op.ID, 1)
	cancel()
	r := answer(t, ch)
	require.NoError(t, r.err)
	assert.Equal(t, model.OperationPending, r.op.Status, "the state read before the caller went away")
}

func TestWaitersAreCappedPerWorkspaceAndProcessAndStop(t *testing.T) {
	uow, waiters, svc := waitSetup(3, 2)
	a := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	b := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	opA := seed(t, uow, a.WorkspaceID, 1)[0]
	opB := seed(t, uow, b.WorkspaceID, 1)[0]

	answers := []<-chan waitResult{
		startWait(t, svc, waiters, a, opA.ID, 1),
		startWait(t, svc, waiters, a, opA.ID, 2),
	}
	_, err := svc.Wait(context.Background(), a, opA.ID, operations.MaxWait)
	require.True(t, domain.IsCode(err, domain.CodeTooManyWaiters), "workspace over its cap: got %v", err)
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Positive(t, de.RetryAfter)
	// Without wait, the same read goes through.
	_, err = svc.Wait(context.Background(), a, opA.ID, 0)
	require.NoError(t, err)

	answers = append(answers, startWait(t, svc, waiters, b, opB.ID, 3))
	_, err = svc.Wait(context.Background(), b, opB.ID, operations.MaxWait)
	require.True(t, domain.IsCode(err, domain.CodeTooManyWaiters), "process over its cap: got %v", err)

	// Stopping answers every waiter with the state it reads, and later
	// waits at once.
	waiters.Stop()
	for _, ch := range answers {
		r := answer(t, ch)
		require.NoError(t, r.err)
		assert.Equal(t, model.OperationPending, r.op.Status)
	}
	got, err := svc.Wait(context.Background(), b, opB.ID, operations.MaxWait)
	require.NoError(t, err)
	assert.Equal(t, model.OperationPending, got.Status)
	assert.Zero(t, waiters.Waiting())
}
