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

func newOperation(workspace uuid.UUID) model.Operation {
	at := now()
	return model.Operation{
		ID:           uuid.New(),
		WorkspaceID:  workspace,
		Kind:         model.OperationStoreVerify,
		Status:       model.OperationPending,
		ResourceType: "store",
		ResourceID:   uuid.New(),
		CreatedBy:    uuid.New(),
		CreatedAt:    at,
		UpdatedAt:    at,
	}
}

func normOperation(op model.Operation) model.Operation {
	op.CreatedAt = dbTime(op.CreatedAt)
	op.UpdatedAt = dbTime(op.UpdatedAt)
	return op
}

func getOperation(t *testing.T, h Harness, workspace, id uuid.UUID) (model.Operation, error) {
	t.Helper()
	var op model.Operation
	err := transact(t, h, workspace, func(ctx context.Context, tx ports.Tx) error {
		var err error
		op, err = tx.Operations().Get(ctx, id)
		return err
	})
	return op, err
}

func createOperation(t *testing.T, h Harness, op model.Operation) {
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
		changed.Status = model.OperationFailed
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
		hijack.Status = model.OperationSucceeded
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Update(ctx, hijack)
		})
		requireCode(t, err, domain.CodeNotFound)

		got, err := getOperation(t, h, wsA, op.ID)
		require.NoError(t, err)
		require.Equal(t, model.OperationPending, got.Status)
	})
}

func listOperations(t *testing.T, h Harness, ws uuid.UUID, f ports.OperationFilter) []model.Operation {
	t.Helper()
	var ops []model.Operation
	mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		ops, err = tx.Operations().List(ctx, f)
		return err
	})
	return ops
}

func operationIDs(ops []model.Operation) []uuid.UUID {
	ids := make([]uuid.UUID, 0, len(ops))
	for _, op := range ops {
		ids = append(ids, op.ID)
	}
	return ids
}

func testOperationList(t *testing.T, h Harness) {
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	// Six operations, ids time-ordered (UUIDv7), over two kinds and two
	// statuses; all[0] is the oldest.
	var all []model.Operation
	for i := range 6 {
		op := newOperation(ws)
		op.ID = uuid.Must(uuid.NewV7())
		op.Kind = []string{model.OperationCatalogSync, model.OperationListingPublish}[i%2]
		op.Status = []model.OperationStatus{model.OperationPending, model.OperationSucceeded, model.OperationSucceeded}[i%3]
		createOperation(t, h, op)
		all = append(all, normOperation(op))
	}
	createOperation(t, h, newOperation(other))
	newestFirst := func(pick func(model.Operation) bool) []uuid.UUID {
		var ids []uuid.UUID
		for i := len(all) - 1; i >= 0; i-- {
			if pick(all[i]) {
				ids = append(ids, all[i].ID)
			}
		}
		return ids
	}
	every := func(model.Operation) bool { return true }

	t.Run("newest first, every field", func(t *testing.T) {
		got := listOperations(t, h, ws, ports.OperationFilter{Limit: 100})
		require.Equal(t, newestFirst(every), operationIDs(got))
		require.Equal(t, all[5], got[0])
	})

	t.Run("a limit of zero or less returns none", func(t *testing.T) {
		require.Empty(t, listOperations(t, h, ws, ports.OperationFilter{}))
		require.Empty(t, listOperations(t, h, ws, ports.OperationFilter{Limit: -1}))
	})

	t.Run("filters by status and kind", func(t *testing.T) {
		got := listOperations(t, h, ws, ports.OperationFilter{Status: model.OperationSucceeded, Limit: 100})
		require.Equal(t, newestFirst(func(op model.Operation) bool { return op.Status == model.OperationSucceeded }), operationIDs(got))
		got = listOperations(t, h, ws, ports.OperationFilter{Kind: model.OperationCatalogSync, Limit: 100})
		require.Equal(t, newestFirst(func(op model.Operation) bool { return op.Kind == model.OperationCatalogSync }), operationIDs(got))
		got = listOperations(t, h, ws, ports.OperationFilter{Kind: model.OperationCatalogSync, Status: model.OperationPending, Limit: 100})
		require.Equal(t, newestFirst(func(op model.Operation) bool {
			return op.Kind == model.OperationCatalogSync && op.Status == model.OperationPending
		}), operationIDs(got))
		require.Empty(t, listOperations(t, h, ws, ports.OperationFilter{Kind: "no.such.kind", Limit: 100}))
	})

	t.Run("pages with the before cursor", func(t *testing.T) {
		var paged []uuid.UUID
		f := ports.OperationFilter{Limit: 4}
		for {
			page := listOperations(t, h, ws, f)
			if len(page) == 0 {
				break
			}
			require.LessOrEqual(t, len(page), 4)
			paged = append(paged, operationIDs(page)...)
			f.Before = page[len(page)-1].ID
		}
		require.Equal(t, newestFirst(every), paged)

		f = ports.OperationFilter{Before: all[3].ID, Status: model.OperationSucceeded, Limit: 1}
		require.Equal(t, []uuid.UUID{all[2].ID}, operationIDs(listOperations(t, h, ws, f)))
	})

	t.Run("another workspace's operations are not listed", func(t *testing.T) {
		got := listOperations(t, h, other, ports.OperationFilter{Limit: 100})
		require.Len(t, got, 1)
		require.Equal(t, other, got[0].WorkspaceID)
	})
}
