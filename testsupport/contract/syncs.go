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
	repo: func(tx ports.Tx) tableRepo[model.CatalogSync] { return tx.Syncs() },
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
		return tx.Syncs().CountItems(ctx, store)
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

func testSyncs(t *testing.T, h Harness) {
	t.Run("a second active sync of a store is refused, naming the first", func(t *testing.T) {
		ws := newWorkspace(t, h)
		store := newStoreIn(t, h, ws)
		first := newSync(ws, store)
		require.NoError(t, syncTable.create(t, h, first))

		second := newSync(ws, store)
		// The refusal does not break the transaction.
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			requireResource(t, tx.Syncs().Create(ctx, second), domain.CodeSyncAlreadyActive, first.ID)
			_, err := tx.Syncs().Get(ctx, first.ID)
			return err
		})
		first.Status = model.TaskRunning
		require.NoError(t, syncTable.update(t, h, first))
		requireResource(t, syncTable.create(t, h, second), domain.CodeSyncAlreadyActive, first.ID)

		// Another store is fine.
		require.NoError(t, syncTable.create(t, h, newSync(ws, newStoreIn(t, h, ws))))

		// After the first succeeded, a new one is allowed, and then it is
		// the active one.
		first.Status = model.TaskSucceeded
		require.NoError(t, syncTable.update(t, h, first))
		require.NoError(t, syncTable.create(t, h, second))
		requireResource(t, syncTable.create(t, h, newSync(ws, store)), domain.CodeSyncAlreadyActive, second.ID)
		second.Status = model.TaskFailed
		require.NoError(t, syncTable.update(t, h, second))
		require.NoError(t, syncTable.create(t, h, newSync(ws, store)))

		// A finished sync cannot become active again while another is.
		first.Status = model.TaskRunning
		requireCode(t, syncTable.update(t, h, first), domain.CodeSyncAlreadyActive)
		got, err := syncTable.get(t, h, ws, first.ID)
		require.NoError(t, err)
		require.Equal(t, model.TaskSucceeded, got.Status)
	})

	t.Run("concurrent creations for one store: exactly one commits", func(t *testing.T) {
		ws := newWorkspace(t, h)
		store := newStoreIn(t, h, ws)
		syncs := [2]model.CatalogSync{newSync(ws, store), newSync(ws, store)}
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, [2]func(ctx context.Context, tx ports.Tx) error{
			func(ctx context.Context, tx ports.Tx) error { return tx.Syncs().Create(ctx, syncs[0]) },
			func(ctx context.Context, tx ports.Tx) error { return tx.Syncs().Create(ctx, syncs[1]) },
		}))
		requireResource(t, loserErr, domain.CodeSyncAlreadyActive, syncs[winner].ID)
		_, err := syncTable.get(t, h, ws, syncs[winner].ID)
		require.NoError(t, err)
		_, err = syncTable.get(t, h, ws, syncs[1-winner].ID)
		requireCode(t, err, domain.CodeNotFound)
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
			return tx.Syncs().UpsertItems(ctx, catalogItems(ws, store, 25, "first"))
		})
		require.Equal(t, 25, countItems(t, h, ws, store))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			// Again, with one listing twice in the batch and one new.
			items := catalogItems(ws, store, 26, "second")
			items = append(items, items[0])
			return tx.Syncs().UpsertItems(ctx, items)
		})
		require.Equal(t, 26, countItems(t, h, ws, store))
		require.Equal(t, 0, countItems(t, h, ws, otherStore))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Syncs().UpsertItems(ctx, nil) })
		require.Equal(t, 26, countItems(t, h, ws, store))
	})

	t.Run("items of a missing store are refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Syncs().UpsertItems(ctx, catalogItems(ws, uuid.New(), 1, "x"))
		})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("items of another workspace are invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		store := newStoreIn(t, h, wsA)
		inTx(t, h, wsA, func(ctx context.Context, tx ports.Tx) error {
			return tx.Syncs().UpsertItems(ctx, catalogItems(wsA, store, 3, "a"))
		})
		require.Equal(t, 0, countItems(t, h, wsB, store))
		err := transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Syncs().UpsertItems(ctx, catalogItems(wsA, store, 1, "b"))
		})
		requireCode(t, err, domain.CodeForbidden)
		require.Equal(t, 3, countItems(t, h, wsA, store))
	})
}
