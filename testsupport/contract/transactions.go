package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// writes is one of everything a business transaction writes.
type writes struct {
	workspace uuid.UUID
	store     model.Store
	operation model.Operation
	event     model.OutboxEvent
	record    model.IdempotencyRecord
}

func newWrites(t *testing.T, h Harness) writes {
	ws := newWorkspace(t, h)
	user := newMember(t, h, ws)
	return writes{
		workspace: ws,
		store:     newStore(ws),
		operation: newOperation(ws),
		event:     newEvent(t, ws, now()),
		record:    newRecord(newScope(ws, user)),
	}
}

// write claims the scope, writes the store, the operation and the event,
// and completes the claim, as an idempotent use case does.
func (w writes) write(ctx context.Context, tx ports.Tx) error {
	existing, err := tx.Idempotency().Claim(ctx, w.record)
	if err != nil {
		return err
	}
	if existing != nil {
		return domain.Errorf(domain.CodeInternal, "contract: fresh scope already claimed")
	}
	if err := tx.Stores().Create(ctx, w.store); err != nil {
		return err
	}
	if err := tx.Operations().Create(ctx, w.operation); err != nil {
		return err
	}
	if err := tx.Outbox().Append(ctx, w.event); err != nil {
		return err
	}
	return tx.Idempotency().Complete(ctx, w.record.Scope, savedResponse(), now())
}

// requireNothingWritten asserts none of w is visible to a new transaction,
// and that its idempotency scope is free again.
func (w writes) requireNothingWritten(t *testing.T, h Harness) {
	t.Helper()
	_, err := storeTable.get(t, h, w.workspace, w.store.ID)
	requireCode(t, err, domain.CodeNotFound)
	_, err = operationTable.get(t, h, w.workspace, w.operation.ID)
	requireCode(t, err, domain.CodeNotFound)
	_, err = getEvent(t, h, w.workspace, w.event.ID)
	requireCode(t, err, domain.CodeNotFound)
	require.Empty(t, listEvents(t, h, w.workspace, "", 10))
	requireClaimable(t, h, w.record)
}

// requireClaimable asserts a new transaction can claim rec's scope; it
// rolls that claim back.
func requireClaimable(t *testing.T, h Harness, rec model.IdempotencyRecord) {
	t.Helper()
	err := transact(t, h, rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		existing, err := tx.Idempotency().Claim(ctx, rec)
		require.NoError(t, err)
		require.Nil(t, existing, "the scope should be free")
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
}

// transactRecovering runs Transact and recovers a panic that escapes it.
func transactRecovering(t *testing.T, h Harness, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) (recovered any, err error) {
	t.Helper()
	defer func() { recovered = recover() }()
	return nil, transact(t, h, workspace, fn)
}

func testTransactions(t *testing.T, h Harness) {
	t.Run("commit makes every write visible", func(t *testing.T) {
		w := newWrites(t, h)
		mustTransact(t, h, w.workspace, w.write)
		_, err := storeTable.get(t, h, w.workspace, w.store.ID)
		require.NoError(t, err)
		_, err = operationTable.get(t, h, w.workspace, w.operation.ID)
		require.NoError(t, err)
		_, err = getEvent(t, h, w.workspace, w.event.ID)
		require.NoError(t, err)
	})

	t.Run("a transaction reads its own writes", func(t *testing.T) {
		w := newWrites(t, h)
		err := transact(t, h, w.workspace, func(ctx context.Context, tx ports.Tx) error {
			require.NoError(t, w.write(ctx, tx))
			_, err := tx.Stores().Get(ctx, w.store.ID)
			require.NoError(t, err)
			_, err = tx.Operations().Get(ctx, w.operation.ID)
			require.NoError(t, err)
			events, err := tx.Outbox().List(ctx, "", 10)
			require.NoError(t, err)
			require.Equal(t, []uuid.UUID{w.event.ID}, eventIDs(events))
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		w.requireNothingWritten(t, h)
	})

	t.Run("an error rolls everything back and is returned", func(t *testing.T) {
		w := newWrites(t, h)
		err := transact(t, h, w.workspace, func(ctx context.Context, tx ports.Tx) error {
			require.NoError(t, w.write(ctx, tx))
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		w.requireNothingWritten(t, h)
	})

	t.Run("a domain error is returned unchanged", func(t *testing.T) {
		ws := newWorkspace(t, h)
		sentinel := domain.Errorf(domain.CodeValidation, "contract: bad input")
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return sentinel })
		require.ErrorIs(t, err, sentinel)
		requireCode(t, err, domain.CodeValidation)
	})

	// A panic in fn rolls back. The adapter may let the panic continue (as
	// bun's RunInTx does) or return an error; either is accepted, a commit
	// is not.
	t.Run("a panic rolls everything back", func(t *testing.T) {
		w := newWrites(t, h)
		recovered, err := transactRecovering(t, h, w.workspace, func(ctx context.Context, tx ports.Tx) error {
			require.NoError(t, w.write(ctx, tx))
			panic("contract: panic on purpose")
		})
		require.True(t, recovered != nil || err != nil, "a panicking fn must re-panic or fail, not commit")
		w.requireNothingWritten(t, h)
	})

	// Row-level security fails closed: without a workspace nothing can be
	// written. The adapter may refuse the transaction or the write.
	t.Run("a transaction without a workspace writes nothing", func(t *testing.T) {
		s := newStore(uuid.Nil)
		err := transact(t, h, uuid.Nil, func(ctx context.Context, tx ports.Tx) error {
			return tx.Stores().Create(ctx, s)
		})
		require.Error(t, err)
	})

	t.Run("uncommitted writes are invisible to other transactions", func(t *testing.T) {
		w := newWrites(t, h)
		release := holdOpen(t, h, w.workspace, w.write, func(context.Context, ports.Tx) error { return nil })

		err := within(t, 5*time.Second, "a read beside an open writer", func() error {
			return h.UoW.Transact(t.Context(), w.workspace, func(ctx context.Context, tx ports.Tx) error {
				if _, err := tx.Stores().Get(ctx, w.store.ID); !domain.IsCode(err, domain.CodeNotFound) {
					return domain.Errorf(domain.CodeInternal, "store of an open transaction: want not found, got %v", err)
				}
				if _, err := tx.Operations().Get(ctx, w.operation.ID); !domain.IsCode(err, domain.CodeNotFound) {
					return domain.Errorf(domain.CodeInternal, "operation of an open transaction: want not found, got %v", err)
				}
				events, err := tx.Outbox().List(ctx, "", 10)
				if err != nil {
					return err
				}
				if len(events) != 0 {
					return domain.Errorf(domain.CodeInternal, "events of an open transaction are visible")
				}
				return nil
			})
		})
		require.NoError(t, err)

		require.NoError(t, release())
		_, err = storeTable.get(t, h, w.workspace, w.store.ID)
		require.NoError(t, err)
	})
}
