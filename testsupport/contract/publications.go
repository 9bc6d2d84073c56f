package contract

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// publicationTable is the publications table to the table contract
// (tables.go).
var publicationTable = taskTable(table[model.Publication]{
	repo: func(tx ports.Tx) tableRepo[model.Publication] { return tx.Publications() },
	row: func(t *testing.T, h Harness, ws uuid.UUID) model.Publication {
		return newPublication(ws, newProductIn(t, h, ws).ID, newStoreIn(t, h, ws))
	},
	full:      func(p *model.Publication) { p.ExternalListingID = "listing-1" },
	updates:   "replaces status, listing id, reason and updated_at only",
	mutable:   func(p *model.Publication) { p.ExternalListingID = "L-9" },
	immutable: func(p *model.Publication) { p.ProductRevision = 9 },
})

func newPublication(ws, product, store uuid.UUID) model.Publication {
	at := writeTime()
	return model.Publication{TaskState: newTaskState(ws, at), ProductID: product, StoreID: store, ProductRevision: 3}
}

func testPublications(t *testing.T, h Harness) {
	t.Run("a second publication of a product to a store is refused, naming the first", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		first := newPublication(ws, product, store)
		require.NoError(t, publicationTable.create(t, h, first))

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
		_, err = publicationTable.get(t, h, ws, second.ID)
		requireCode(t, err, domain.CodeNotFound)

		// Succeeded is not failed: still refused.
		first.Status = model.TaskSucceeded
		require.NoError(t, publicationTable.update(t, h, first))
		requireResource(t, publicationTable.create(t, h, second), domain.CodeAlreadyPublished, first.ID)

		// Another store, or another product, is fine.
		require.NoError(t, publicationTable.create(t, h, newPublication(ws, product, newStoreIn(t, h, ws))))
		require.NoError(t, publicationTable.create(t, h, newPublication(ws, newProductIn(t, h, ws).ID, store)))
	})

	t.Run("after the first failed a new one is allowed", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		first := newPublication(ws, product, store)
		require.NoError(t, publicationTable.create(t, h, first))
		first.Status = model.TaskFailed
		first.Reason = "platform refused"
		require.NoError(t, publicationTable.update(t, h, first))

		second := newPublication(ws, product, store)
		require.NoError(t, publicationTable.create(t, h, second))
		third := newPublication(ws, product, store)
		requireResource(t, publicationTable.create(t, h, third), domain.CodeAlreadyPublished, second.ID)

		// A failed one may also be written directly.
		failed := newPublication(ws, product, store)
		failed.Status = model.TaskFailed
		require.NoError(t, publicationTable.create(t, h, failed))

		// The first cannot come back while the second is active.
		first.Status = model.TaskPending
		requireCode(t, publicationTable.update(t, h, first), domain.CodeAlreadyPublished)
		got, err := publicationTable.get(t, h, ws, first.ID)
		require.NoError(t, err)
		require.Equal(t, model.TaskFailed, got.Status)
	})

	t.Run("fail and publish again in one transaction", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		first := newPublication(ws, product, store)
		require.NoError(t, publicationTable.create(t, h, first))
		second := newPublication(ws, product, store)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			failed := first
			failed.Status = model.TaskFailed
			if err := tx.Publications().Update(ctx, failed); err != nil {
				return err
			}
			return tx.Publications().Create(ctx, second)
		})
		requireResource(t, publicationTable.create(t, h, newPublication(ws, product, store)), domain.CodeAlreadyPublished, second.ID)
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
		_, err := publicationTable.get(t, h, ws, pubs[1-winner].ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("a missing product or store is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		requireCode(t, publicationTable.create(t, h, newPublication(ws, uuid.New(), store)), domain.CodeConflict)
		requireCode(t, publicationTable.create(t, h, newPublication(ws, product, uuid.New())), domain.CodeConflict)
		// Another workspace's store is as good as missing.
		other := newWorkspace(t, h)
		requireCode(t, publicationTable.create(t, h, newPublication(ws, product, newStoreIn(t, h, other))), domain.CodeConflict)
	})
}
