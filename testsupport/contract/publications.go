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

func newPublication(ws, product, store uuid.UUID) model.Publication {
	at := writeTime()
	return model.Publication{TaskState: newTaskState(ws, at), ProductID: product, StoreID: store, ProductRevision: 3}
}

func normPublication(p model.Publication) model.Publication {
	p.CreatedAt = dbTime(p.CreatedAt)
	p.UpdatedAt = dbTime(p.UpdatedAt)
	return p
}

func createPublication(t *testing.T, h Harness, p model.Publication) error {
	t.Helper()
	return transact(t, h, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error { return tx.Publications().Create(ctx, p) })
}

func getPublication(t *testing.T, h Harness, ws, id uuid.UUID) (model.Publication, error) {
	t.Helper()
	var p model.Publication
	err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		p, err = tx.Publications().Get(ctx, id)
		return err
	})
	return p, err
}

func updatePublication(t *testing.T, h Harness, p model.Publication) error {
	t.Helper()
	return transact(t, h, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error { return tx.Publications().Update(ctx, p) })
}

func testPublications(t *testing.T, h Harness) {
	t.Run("create then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newPublication(ws, newProductIn(t, h, ws).ID, newStoreIn(t, h, ws))
		p.Status = model.TaskSucceeded
		p.ExternalListingID = "listing-1"
		p.Reason = "r"
		require.NoError(t, createPublication(t, h, p))
		got, err := getPublication(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Equal(t, normPublication(p), got)
	})

	t.Run("update replaces status, listing id, reason and updated_at only", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newPublication(ws, newProductIn(t, h, ws).ID, newStoreIn(t, h, ws))
		require.NoError(t, createPublication(t, h, p))
		changed := p
		changed.Status = model.TaskSucceeded
		changed.ExternalListingID = "L-9"
		changed.Reason = "done"
		changed.UpdatedAt = p.UpdatedAt.Add(time.Minute)
		changed.ProductRevision = 9
		changed.OperationID = uuid.New()
		changed.CreatedAt = p.CreatedAt.Add(-time.Hour)
		require.NoError(t, updatePublication(t, h, changed))

		want := normPublication(p)
		want.Status, want.ExternalListingID, want.Reason, want.UpdatedAt = changed.Status, changed.ExternalListingID, changed.Reason, dbTime(changed.UpdatedAt)
		got, err := getPublication(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("a second publication of a product to a store is refused, naming the first", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		first := newPublication(ws, product, store)
		require.NoError(t, createPublication(t, h, first))

		second := newPublication(ws, product, store)
		// The refusal does not break the transaction: the use case can go on
		// and read the existing publication.
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			err := tx.Publications().Create(ctx, second)
			requireResource(t, err, domain.CodeAlreadyPublished, first.ID)
			existing, err := tx.Publications().Get(ctx, first.ID)
			require.NoError(t, err)
			require.Equal(t, first.ID, existing.ID)
			return nil
		})
		require.NoError(t, err)
		_, err = getPublication(t, h, ws, second.ID)
		requireCode(t, err, domain.CodeNotFound)

		// Succeeded is not failed: still refused.
		first.Status = model.TaskSucceeded
		require.NoError(t, updatePublication(t, h, first))
		requireResource(t, createPublication(t, h, second), domain.CodeAlreadyPublished, first.ID)

		// Another store, or another product, is fine.
		require.NoError(t, createPublication(t, h, newPublication(ws, product, newStoreIn(t, h, ws))))
		require.NoError(t, createPublication(t, h, newPublication(ws, newProductIn(t, h, ws).ID, store)))
	})

	t.Run("after the first failed a new one is allowed", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		first := newPublication(ws, product, store)
		require.NoError(t, createPublication(t, h, first))
		first.Status = model.TaskFailed
		first.Reason = "platform refused"
		require.NoError(t, updatePublication(t, h, first))

		second := newPublication(ws, product, store)
		require.NoError(t, createPublication(t, h, second))
		third := newPublication(ws, product, store)
		requireResource(t, createPublication(t, h, third), domain.CodeAlreadyPublished, second.ID)

		// A failed one may also be written directly.
		failed := newPublication(ws, product, store)
		failed.Status = model.TaskFailed
		require.NoError(t, createPublication(t, h, failed))

		// The first cannot come back while the second is active.
		first.Status = model.TaskPending
		requireCode(t, updatePublication(t, h, first), domain.CodeAlreadyPublished)
		got, err := getPublication(t, h, ws, first.ID)
		require.NoError(t, err)
		require.Equal(t, model.TaskFailed, got.Status)
	})

	t.Run("fail and publish again in one transaction", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		first := newPublication(ws, product, store)
		require.NoError(t, createPublication(t, h, first))
		second := newPublication(ws, product, store)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			failed := first
			failed.Status = model.TaskFailed
			if err := tx.Publications().Update(ctx, failed); err != nil {
				return err
			}
			return tx.Publications().Create(ctx, second)
		})
		requireResource(t, createPublication(t, h, newPublication(ws, product, store)), domain.CodeAlreadyPublished, second.ID)
	})

	t.Run("two concurrent publications of one product to one store: one wins", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		pubs := [2]model.Publication{newPublication(ws, product, store), newPublication(ws, product, store)}
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, [2]func(ctx context.Context, tx ports.Tx) error{
			func(ctx context.Context, tx ports.Tx) error { return tx.Publications().Create(ctx, pubs[0]) },
			func(ctx context.Context, tx ports.Tx) error { return tx.Publications().Create(ctx, pubs[1]) },
		}))
		requireResource(t, loserErr, domain.CodeAlreadyPublished, pubs[winner].ID)
		_, err := getPublication(t, h, ws, pubs[1-winner].ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("a missing product or store is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		requireCode(t, createPublication(t, h, newPublication(ws, uuid.New(), store)), domain.CodeConflict)
		requireCode(t, createPublication(t, h, newPublication(ws, product, uuid.New())), domain.CodeConflict)
		// Another workspace's store is as good as missing.
		other := newWorkspace(t, h)
		requireCode(t, createPublication(t, h, newPublication(ws, product, newStoreIn(t, h, other))), domain.CodeConflict)
	})

	t.Run("missing is not found, an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getPublication(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		requireCode(t, updatePublication(t, h, newPublication(ws, uuid.New(), uuid.New())), domain.CodeNotFound)

		product := newProductIn(t, h, ws).ID
		p := newPublication(ws, product, newStoreIn(t, h, ws))
		require.NoError(t, createPublication(t, h, p))
		again := newPublication(ws, product, newStoreIn(t, h, ws))
		again.ID = p.ID
		requireCode(t, createPublication(t, h, again), domain.CodeConflict)
	})

	t.Run("a publication of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		p := newPublication(wsA, newProductIn(t, h, wsA).ID, newStoreIn(t, h, wsA))
		require.NoError(t, createPublication(t, h, p))
		_, err := getPublication(t, h, wsB, p.ID)
		requireCode(t, err, domain.CodeNotFound)
		hijack := p
		hijack.WorkspaceID = wsB
		hijack.Status = model.TaskFailed
		requireCode(t, updatePublication(t, h, hijack), domain.CodeNotFound)
		got, err := getPublication(t, h, wsA, p.ID)
		require.NoError(t, err)
		require.Equal(t, model.TaskPending, got.Status)
	})
}
