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

func newTransfer(ws uuid.UUID) model.MaterialTransfer {
	at := writeTime()
	return model.MaterialTransfer{
		TaskState: newTaskState(ws, at),
		// Out of order on purpose: Get returns them by index.
		Items: []model.MaterialItem{
			{Index: 2, SourceURL: "https://cdn.example.com/c.jpg?sig=abc&x=1"},
			{Index: 0, SourceURL: "https://cdn.example.com/a.jpg"},
			{Index: 1, SourceURL: "https://cdn.example.com/b.jpg", ObjectKey: "k/1", SizeBytes: 5, Done: true},
		},
	}
}

func getTransfer(t *testing.T, h Harness, ws, id uuid.UUID) (model.MaterialTransfer, error) {
	t.Helper()
	var tr model.MaterialTransfer
	err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		tr, err = tx.MaterialTransfers().Get(ctx, id)
		return err
	})
	return tr, err
}

func markItemDone(t *testing.T, h Harness, ws, id uuid.UUID, index int, key string, size int64) error {
	t.Helper()
	return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.MaterialTransfers().MarkItemDone(ctx, id, index, key, size)
	})
}

func testMaterialTransfers(t *testing.T, h Harness) {
	t.Run("create then get keeps every field, items by index", func(t *testing.T) {
		ws := newWorkspace(t, h)
		tr := newTransfer(ws)
		tr.Reason = "r"
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().Create(ctx, tr) })

		want := tr
		want.CreatedAt, want.UpdatedAt = dbTime(tr.CreatedAt), dbTime(tr.UpdatedAt)
		want.Items = []model.MaterialItem{tr.Items[1], tr.Items[2], tr.Items[0]}
		got, err := getTransfer(t, h, ws, tr.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("update status replaces status, reason and updated_at only", func(t *testing.T) {
		ws := newWorkspace(t, h)
		tr := newTransfer(ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().Create(ctx, tr) })
		changed := tr
		changed.Status = model.TaskFailed
		changed.Reason = "source unreachable"
		changed.UpdatedAt = tr.UpdatedAt.Add(time.Minute)
		changed.OperationID = uuid.New()
		changed.CreatedAt = tr.CreatedAt.Add(-time.Hour)
		changed.Items = nil
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().UpdateStatus(ctx, changed) })

		got, err := getTransfer(t, h, ws, tr.ID)
		require.NoError(t, err)
		require.Equal(t, model.TaskFailed, got.Status)
		require.Equal(t, "source unreachable", got.Reason)
		require.Equal(t, dbTime(changed.UpdatedAt), got.UpdatedAt)
		require.Equal(t, tr.OperationID, got.OperationID)
		require.Equal(t, dbTime(tr.CreatedAt), got.CreatedAt)
		require.Len(t, got.Items, 3)
	})

	t.Run("mark item done records it once", func(t *testing.T) {
		ws := newWorkspace(t, h)
		tr := newTransfer(ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().Create(ctx, tr) })

		require.NoError(t, markItemDone(t, h, ws, tr.ID, 0, "k/0", 42))
		require.NoError(t, markItemDone(t, h, ws, tr.ID, 0, "k/other", 7), "marking a done item again")
		require.NoError(t, markItemDone(t, h, ws, tr.ID, 1, "k/other", 7), "an item created done")

		got, err := getTransfer(t, h, ws, tr.ID)
		require.NoError(t, err)
		require.Equal(t, model.MaterialItem{Index: 0, SourceURL: tr.Items[1].SourceURL, ObjectKey: "k/0", SizeBytes: 42, Done: true}, got.Items[0])
		require.Equal(t, tr.Items[2], got.Items[1])
		require.False(t, got.Items[2].Done)
	})

	t.Run("missing is not found, an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getTransfer(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.MaterialTransfers().UpdateStatus(ctx, newTransfer(ws))
		})
		requireCode(t, err, domain.CodeNotFound)
		requireCode(t, markItemDone(t, h, ws, uuid.New(), 0, "k", 1), domain.CodeNotFound)

		tr := newTransfer(ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().Create(ctx, tr) })
		requireCode(t, markItemDone(t, h, ws, tr.ID, 3, "k", 1), domain.CodeNotFound)
		again := newTransfer(ws)
		again.ID = tr.ID
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().Create(ctx, again) })
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("a transfer of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		tr := newTransfer(wsA)
		inTx(t, h, wsA, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().Create(ctx, tr) })
		_, err := getTransfer(t, h, wsB, tr.ID)
		requireCode(t, err, domain.CodeNotFound)
		requireCode(t, markItemDone(t, h, wsB, tr.ID, 0, "k", 1), domain.CodeNotFound)
		hijack := tr
		hijack.Status = model.TaskFailed
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().UpdateStatus(ctx, hijack) })
		requireCode(t, err, domain.CodeNotFound)
		got, err := getTransfer(t, h, wsA, tr.ID)
		require.NoError(t, err)
		require.Equal(t, model.TaskPending, got.Status)
		require.False(t, got.Items[0].Done)
	})
}
