package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// keyedJob commits a job of key in ws: its running operation and its
// event, due now.
func (e *env) keyedJob(t *testing.T, ws uuid.UUID, key string) (model.OutboxEvent, model.Operation) {
	t.Helper()
	now := e.clock.Now()
	op := model.Operation{ID: uuid.New(), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationRunning,
		ResourceType: "store", ResourceID: uuid.New(), CreatedBy: uuid.New(), CreatedAt: now, UpdatedAt: now}
	ev, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, "test.event", "store", op.ResourceID,
		model.JobOperation{OperationID: op.ID}, now)
	require.NoError(t, err)
	ev.OrderingKey = key
	require.NoError(t, e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Operations().Create(ctx, op); err != nil {
			return err
		}
		return tx.Outbox().Append(ctx, ev)
	}))
	return ev, op
}

func (e *env) claimIDs(t *testing.T, ws uuid.UUID) []uuid.UUID {
	t.Helper()
	claim, err := ports.Query(context.Background(), e.uow, ws, func(ctx context.Context, tx ports.Tx) (ports.Claim, error) {
		return tx.OutboxDispatch().ClaimDue(ctx, "d", e.clock.Now(), time.Minute, 10, 10)
	})
	require.NoError(t, err)
	var ids []uuid.UUID
	for _, ev := range claim.Events {
		ids = append(ids, ev.ID)
	}
	return ids
}

// An operator who will not re-drive a job given up on releases its key:
// the dead letter is retired (dispatched, its operation stays failed) and
// the key's next job goes. A dead letter whose job never ran (its
// operation not ended) is not released: re-driving is the way for it.
func TestReleaseLetsAKeyHeldByADeadLetterGoOn(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	ctx := context.Background()
	first, firstOp := e.keyedJob(t, ws, "store/a")
	second, _ := e.keyedJob(t, ws, "store/a")
	require.Equal(t, []uuid.UUID{first.ID}, e.claimIDs(t, ws))
	// Its worker gives up: operation failed, event dead-lettered.
	require.NoError(t, e.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		firstOp.Status, firstOp.UpdatedAt = model.OperationFailed, e.clock.Now()
		if err := tx.Operations().Update(ctx, firstOp); err != nil {
			return err
		}
		_, err := tx.Outbox().DeadLetterJob(ctx, first.ID, 1, "gave up")
		return err
	}))
	require.Empty(t, e.claimIDs(t, ws), "the dead letter holds store/a")

	admin := dispatch.NewAdmin(e.uow, e.clock, nil, nil)
	n, err := admin.Release(ctx, ws, []uuid.UUID{first.ID})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got := e.event(t, ws, first.ID)
	require.Equal(t, model.OutboxDispatched, got.Status)
	require.Equal(t, dispatch.ReleasedByOperator, got.LastError)
	require.Equal(t, []uuid.UUID{second.ID}, e.claimIDs(t, ws), "released: the next job of the key goes")

	// A dead letter the Dispatcher could not deliver: its job never ran.
	undelivered, _ := e.keyedJob(t, ws, "store/b")
	require.Equal(t, []uuid.UUID{undelivered.ID}, e.claimIDs(t, ws))
	_, err = ports.Query(ctx, e.uow, ws, func(ctx context.Context, tx ports.Tx) (bool, error) {
		return tx.OutboxDispatch().DeadLetter(ctx, "d", undelivered.ID, "refused by the broker")
	})
	require.NoError(t, err)
	n, err = admin.Release(ctx, ws, []uuid.UUID{undelivered.ID})
	require.True(t, domain.IsCode(err, domain.CodeInvalidState), "%v", err)
	require.Zero(t, n)
	require.Equal(t, model.OutboxDeadLetter, e.event(t, ws, undelivered.ID).Status)
}
