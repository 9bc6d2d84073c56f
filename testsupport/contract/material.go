package contract

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// transferTable is the material transfers table to the table contract
// (tables.go).
var transferTable = taskTable(table[model.MaterialTransfer]{
	repo: func(tx ports.Tx) tableRepo[model.MaterialTransfer] {
		return statusTransfers{ports.Repository[ports.MaterialTransferRepository](tx)}
	},
	row: func(_ *testing.T, _ Harness, ws uuid.UUID) model.MaterialTransfer { return newTransfer(ws) },
	stored: func(tr model.MaterialTransfer) model.MaterialTransfer {
		tr.Items = slices.Clone(tr.Items)
		slices.SortFunc(tr.Items, func(a, b model.MaterialItem) int { return a.Index - b.Index })
		return tr
	},
	scramble:  func(tr *model.MaterialTransfer) { tr.Items[0].SourceURL = "https://elsewhere.example.com/" },
	updates:   "status replaces status, reason and updated_at only",
	immutable: func(tr *model.MaterialTransfer) { tr.Items = nil },
})

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

// statusTransfers is the material transfers repository to the table
// contract: UpdateStatus is its Update.
type statusTransfers struct {
	ports.MaterialTransferRepository
}

func (r statusTransfers) Update(ctx context.Context, tr model.MaterialTransfer) error {
	return r.UpdateStatus(ctx, tr)
}

func markItemDone(t *testing.T, h Harness, ws, id uuid.UUID, index int, key string, size int64) error {
	t.Helper()
	return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		return ports.Repository[ports.MaterialTransferRepository](tx).MarkItemDone(ctx, id, index, key, size)
	})
}

func testMaterialTransfers(t *testing.T, h Harness) {
	t.Run("mark item done records it once", func(t *testing.T) {
		ws := newWorkspace(t, h)
		tr := newTransfer(ws)
		require.NoError(t, transferTable.create(t, h, tr))

		require.NoError(t, markItemDone(t, h, ws, tr.ID, 0, "k/0", 42))
		require.NoError(t, markItemDone(t, h, ws, tr.ID, 0, "k/other", 7), "marking a done item again")
		require.NoError(t, markItemDone(t, h, ws, tr.ID, 1, "k/other", 7), "an item created done")

		got, err := transferTable.get(t, h, ws, tr.ID)
		require.NoError(t, err)
		require.Equal(t, model.MaterialItem{Index: 0, SourceURL: tr.Items[1].SourceURL, ObjectKey: "k/0", SizeBytes: 42, Done: true}, got.Items[0])
		require.Equal(t, tr.Items[2], got.Items[1])
		require.False(t, got.Items[2].Done)
	})

	t.Run("a missing item, or one of a missing or another workspace's transfer, is not found", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		requireCode(t, markItemDone(t, h, wsA, uuid.New(), 0, "k", 1), domain.CodeNotFound)
		tr := newTransfer(wsA)
		require.NoError(t, transferTable.create(t, h, tr))
		requireCode(t, markItemDone(t, h, wsA, tr.ID, 3, "k", 1), domain.CodeNotFound)
		requireCode(t, markItemDone(t, h, wsB, tr.ID, 0, "k", 1), domain.CodeNotFound)
		got, err := transferTable.get(t, h, wsA, tr.ID)
		require.NoError(t, err)
		require.False(t, got.Items[0].Done)
	})
}

// The material transfers kind's contract (kinds.go).
var _ = registerKind("material_transfers", kindContract{
	table: transferTable.check, own: testMaterialTransfers,
	list: listing(byStatus(transferTable, transferTable.status, model.TaskSucceeded, model.TaskPending)),
})
