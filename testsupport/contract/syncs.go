package contract

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func newSync(ws, store uuid.UUID) model.CatalogSync {
	at := writeTime()
	return model.CatalogSync{TaskState: newTaskState(ws, at), StoreID: store}
}

func createSync(t *testing.T, h Harness, s model.CatalogSync) error {
	t.Helper()
	return transact(t, h, s.WorkspaceID, func(ctx context.Context, tx ports.Tx) error { return tx.Syncs().Create(ctx, s) })
}

func updateSync(t *testing.T, h Harness, s model.CatalogSync) error {
	t.Helper()
	return transact(t, h, s.WorkspaceID, func(ctx context.Context, tx ports.Tx) error { return tx.Syncs().Update(ctx, s) })
}

func getSync(t *testing.T, h Harness, ws, id uuid.UUID) (model.CatalogSync, error) {
	t.Helper()
	var s model.CatalogSync
	err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		s, err = tx.Syncs().Get(ctx, id)
		return err
	})
	return s, err
}

func countItems(t *testing.T, h Harness, ws, store uuid.UUID) int {
	t.Helper()
	var n int
	inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		n, err = tx.Syncs().CountItems(ctx, store)
		return err
	})
	return n
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
	t.Run("create then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		s := newSync(ws, newStoreIn(t, h, ws))
		s.Status = model.TaskRunning
		s.ItemsSynced = 17
		s.Reason = "r"
		require.NoError(t, createSync(t, h, s))
		got, err := getSync(t, h, ws, s.ID)
		require.NoError(t, err)
		want := s
		want.CreatedAt, want.UpdatedAt = dbTime(s.CreatedAt), dbTime(s.UpdatedAt)
		require.Equal(t, want, got)
	})

	t.Run("update replaces status, items synced, reason and updated_at only", func(t *testing.T) {
		ws := newWorkspace(t, h)
		s := newSync(ws, newStoreIn(t, h, ws))
		require.NoError(t, createSync(t, h, s))
		changed := s
		changed.Status = model.TaskSucceeded
		changed.ItemsSynced = 250
		changed.Reason = "done"
		changed.UpdatedAt = s.UpdatedAt.Add(time.Minute)
		changed.OperationID = uuid.New()
		changed.CreatedAt = s.CreatedAt.Add(-time.Hour)
		require.NoError(t, updateSync(t, h, changed))
		want := s
		want.Status, want.ItemsSynced, want.Reason = changed.Status, changed.ItemsSynced, changed.Reason
		want.CreatedAt, want.UpdatedAt = dbTime(s.CreatedAt), dbTime(changed.UpdatedAt)
		got, err := getSync(t, h, ws, s.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("a second active sync of a store is refused, naming the first", func(t *testing.T) {
		ws := newWorkspace(t, h)
		store := newStoreIn(t, h, ws)
		first := newSync(ws, store)
		require.NoError(t, createSync(t, h, first))

		second := newSync(ws, store)
		// The refusal does not break the transaction.
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			requireResource(t, tx.Syncs().Create(ctx, second), domain.CodeSyncAlreadyActive, first.ID)
			_, err := tx.Syncs().Get(ctx, first.ID)
			return err
		})
		first.Status = model.TaskRunning
		require.NoError(t, updateSync(t, h, first))
		requireResource(t, createSync(t, h, second), domain.CodeSyncAlreadyActive, first.ID)

		// Another store is fine.
		require.NoError(t, createSync(t, h, newSync(ws, newStoreIn(t, h, ws))))

		// After the first succeeded, a new one is allowed, and then it is
		// the active one.
		first.Status = model.TaskSucceeded
		require.NoError(t, updateSync(t, h, first))
		require.NoError(t, createSync(t, h, second))
		requireResource(t, createSync(t, h, newSync(ws, store)), domain.CodeSyncAlreadyActive, second.ID)
		second.Status = model.TaskFailed
		require.NoError(t, updateSync(t, h, second))
		require.NoError(t, createSync(t, h, newSync(ws, store)))

		// A finished sync cannot become active again while another is.
		first.Status = model.TaskRunning
		requireCode(t, updateSync(t, h, first), domain.CodeSyncAlreadyActive)
		got, err := getSync(t, h, ws, first.ID)
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
		_, err := getSync(t, h, ws, syncs[winner].ID)
		require.NoError(t, err)
		_, err = getSync(t, h, ws, syncs[1-winner].ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("a missing store is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		requireCode(t, createSync(t, h, newSync(ws, uuid.New())), domain.CodeConflict)
		other := newWorkspace(t, h)
		requireCode(t, createSync(t, h, newSync(ws, newStoreIn(t, h, other))), domain.CodeConflict)
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

	t.Run("missing is not found, an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getSync(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		requireCode(t, updateSync(t, h, newSync(ws, uuid.New())), domain.CodeNotFound)
		s := newSync(ws, newStoreIn(t, h, ws))
		require.NoError(t, createSync(t, h, s))
		again := newSync(ws, newStoreIn(t, h, ws))
		again.ID = s.ID
		requireCode(t, createSync(t, h, again), domain.CodeConflict)
	})

	t.Run("syncs and items of another workspace are invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		store := newStoreIn(t, h, wsA)
		s := newSync(wsA, store)
		require.NoError(t, createSync(t, h, s))
		inTx(t, h, wsA, func(ctx context.Context, tx ports.Tx) error {
			return tx.Syncs().UpsertItems(ctx, catalogItems(wsA, store, 3, "a"))
		})
		_, err := getSync(t, h, wsB, s.ID)
		requireCode(t, err, domain.CodeNotFound)
		hijack := s
		hijack.WorkspaceID = wsB
		hijack.Status = model.TaskFailed
		requireCode(t, updateSync(t, h, hijack), domain.CodeNotFound)
		require.Equal(t, 0, countItems(t, h, wsB, store))
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Syncs().UpsertItems(ctx, catalogItems(wsA, store, 1, "b"))
		})
		requireCode(t, err, domain.CodeForbidden)
		require.Equal(t, 3, countItems(t, h, wsA, store))
	})
}
