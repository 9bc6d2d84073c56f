package contract

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// syncTable is the catalog syncs table to the table contract (tables.go).
var syncTable = taskTable(table[model.CatalogSync]{
	repo: func(tx ports.Tx) tableRepo[model.CatalogSync] { return ports.Repository[ports.SyncRepository](tx) },
	row: func(t *testing.T, h Harness, ws uuid.UUID) model.CatalogSync {
		return newSync(ws, newStoreIn(t, h, ws))
	},
	full:    func(s *model.CatalogSync) { s.ItemsSynced = 17 },
	updates: "replaces status, items synced, reason and updated_at only",
	mutable: func(s *model.CatalogSync) { s.ItemsSynced = 250 },
})

func newSync(ws, store uuid.UUID) model.CatalogSync {
	at := writeTime()
	return model.CatalogSync{TaskState: newTaskState(ws, at), StoreID: store}
}

func countItems(t *testing.T, h Harness, ws, store uuid.UUID) int {
	t.Helper()
	return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
		return h.CatalogItems(ctx, tx, store)
	})
}

func catalogItems(ws, store uuid.UUID, n int, title string) []model.CatalogItem {
	items := make([]model.CatalogItem, n)
	for i := range items {
		items[i] = model.CatalogItem{
			WorkspaceID: ws, StoreID: store, ExternalID: fmt.Sprintf("ext-%03d", i),
			Title: title, PriceMinor: int64(100 + i), Currency: "EUR", SyncedAt: writeTime(),
		}
	}
	return items
}

// syncLive is the catalog syncs table to the live key contract (live.go):
// one active sync of a store; a finished one, succeeded or failed, makes
// way.
var syncLive = liveKey[model.CatalogSync]{
	table:   syncTable,
	twin:    func(s model.CatalogSync) model.CatalogSync { return newSync(s.WorkspaceID, s.StoreID) },
	taken:   domain.CodeSyncAlreadyActive,
	holding: []model.TaskStatus{model.TaskPending, model.TaskRunning},
	freeing: []model.TaskStatus{model.TaskSucceeded, model.TaskFailed},
}

func testSyncs(t *testing.T, h Harness) {
	t.Run("the key is the store: another store is fine", func(t *testing.T) {
		ws := newWorkspace(t, h)
		require.NoError(t, syncTable.create(t, h, newSync(ws, newStoreIn(t, h, ws))))
		require.NoError(t, syncTable.create(t, h, newSync(ws, newStoreIn(t, h, ws))))
	})

	t.Run("a missing store is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		requireCode(t, syncTable.create(t, h, newSync(ws, uuid.New())), domain.CodeConflict)
		other := newWorkspace(t, h)
		requireCode(t, syncTable.create(t, h, newSync(ws, newStoreIn(t, h, other))), domain.CodeConflict)
	})

	t.Run("upserting items twice keeps one row per listing", func(t *testing.T) {
		ws := newWorkspace(t, h)
		store, otherStore := newStoreIn(t, h, ws), newStoreIn(t, h, ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return ports.Repository[ports.SyncRepository](tx).UpsertItems(ctx, catalogItems(ws, store, 25, "first"))
		})
		require.Equal(t, 25, countItems(t, h, ws, store))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			// Again, with one listing twice in the batch and one new.
			items := catalogItems(ws, store, 26, "second")
			items = append(items, items[0])
			return ports.Repository[ports.SyncRepository](tx).UpsertItems(ctx, items)
		})
		require.Equal(t, 26, countItems(t, h, ws, store))
		require.Equal(t, 0, countItems(t, h, ws, otherStore))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return ports.Repository[ports.SyncRepository](tx).UpsertItems(ctx, nil)
		})
		require.Equal(t, 26, countItems(t, h, ws, store))
	})

	t.Run("items of a missing store are refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return ports.Repository[ports.SyncRepository](tx).UpsertItems(ctx, catalogItems(ws, uuid.New(), 1, "x"))
		})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("items of another workspace are invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		store := newStoreIn(t, h, wsA)
		inTx(t, h, wsA, func(ctx context.Context, tx ports.Tx) error {
			return ports.Repository[ports.SyncRepository](tx).UpsertItems(ctx, catalogItems(wsA, store, 3, "a"))
		})
		require.Equal(t, 0, countItems(t, h, wsB, store))
		err := transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return ports.Repository[ports.SyncRepository](tx).UpsertItems(ctx, catalogItems(wsA, store, 1, "b"))
		})
		requireCode(t, err, domain.CodeForbidden)
		require.Equal(t, 3, countItems(t, h, wsA, store))
	})
}

// The catalog syncs kind's contract (kinds.go).
var _ = registerKind("catalog_syncs", kindContract{
	table: syncTable.check, live: syncLive.check, own: testSyncs,
	list: listing(byStatus(syncTable, syncTable.status, model.TaskSucceeded, model.TaskFailed)),
})
