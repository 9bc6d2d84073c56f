package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

func newOperation(workspace uuid.UUID) domain.Operation {
	at := now()
	return domain.Operation{
		ID:           uuid.New(),
		WorkspaceID:  workspace,
		Kind:         domain.OperationStoreVerify,
		Status:       domain.OperationPending,
		ResourceType: "store",
		ResourceID:   uuid.New(),
		CreatedBy:    uuid.New(),
		CreatedAt:    at,
		UpdatedAt:    at,
	}
}

func normOperation(op domain.Operation) domain.Operation {
	op.CreatedAt = dbTime(op.CreatedAt)
	op.UpdatedAt = dbTime(op.UpdatedAt)
	return op
}

func getOperation(t *testing.T, h Harness, workspace, id uuid.UUID) (domain.Operation, error) {
	t.Helper()
	var op domain.Operation
	err := transact(t, h, workspace, func(ctx context.Context, tx ports.Tx) error {
		var err error
		op, err = tx.Operations().Get(ctx, id)
		return err
	})
	return op, err
}

func createOperation(t *testing.T, h Harness, op domain.Operation) {
	t.Helper()
	mustTransact(t, h, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Operations().Create(ctx, op)
	})
}

func testOperations(t *testing.T, h Harness) {
	t.Run("create then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		op := newOperation(ws)
		createOperation(t, h, op)
		got, err := getOperation(t, h, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, normOperation(op), normOperation(got))
	})

	t.Run("update replaces status, error and updated_at only", func(t *testing.T) {
		ws := newWorkspace(t, h)
		op := newOperation(ws)
		createOperation(t, h, op)

		changed := op
		changed.Status = domain.OperationFailed
		changed.Error = "the platform refused the credentials"
		changed.UpdatedAt = op.UpdatedAt.Add(time.Minute)
		// Not mutable: these must be left as they were.
		changed.Kind = "other.kind"
		changed.ResourceType = "other"
		changed.ResourceID = uuid.New()
		changed.CreatedBy = uuid.New()
		changed.CreatedAt = op.CreatedAt.Add(-time.Hour)
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Update(ctx, changed)
		})

		want := normOperation(op)
		want.Status = changed.Status
		want.Error = changed.Error
		want.UpdatedAt = dbTime(changed.UpdatedAt)
		got, err := getOperation(t, h, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, want, normOperation(got))
	})

	t.Run("missing is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getOperation(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Update(ctx, newOperation(ws))
		})
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		op := newOperation(ws)
		createOperation(t, h, op)
		again := newOperation(ws)
		again.ID = op.ID
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Create(ctx, again)
		})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("an operation of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		op := newOperation(wsA)
		createOperation(t, h, op)

		_, err := getOperation(t, h, wsB, op.ID)
		requireCode(t, err, domain.CodeNotFound)

		hijack := op
		hijack.Status = domain.OperationSucceeded
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Update(ctx, hijack)
		})
		requireCode(t, err, domain.CodeNotFound)

		got, err := getOperation(t, h, wsA, op.ID)
		require.NoError(t, err)
		require.Equal(t, domain.OperationPending, got.Status)
	})
}
