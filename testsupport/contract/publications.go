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
	repo: func(tx ports.Tx) tableRepo[model.Publication] {
		return ports.Repository[ports.PublicationRepository](tx)
	},
	row: func(t *testing.T, h Harness, ws uuid.UUID) model.Publication {
		return newPublication(ws, newProductIn(t, h, ws).ID, newStoreIn(t, h, ws))
	},
	full:      func(p *model.Publication) { p.ExternalListingID, p.WaitsBehind = "listing-1", uuid.New() },
	updates:   "replaces status, listing id, reason and updated_at only",
	mutable:   func(p *model.Publication) { p.ExternalListingID = "L-9" },
	immutable: func(p *model.Publication) { p.ProductRevision = 9 },
})

func newPublication(ws, product, store uuid.UUID) model.Publication {
	at := writeTime()
	return model.Publication{TaskState: newTaskState(ws, at), ProductID: product, StoreID: store, ProductRevision: 3}
}

func testPublications(t *testing.T, h Harness) {
	t.Run("a product may have several live publications to a store, in a line: the last is the one none waits behind", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		last := func() uuid.UUID {
			var id uuid.UUID
			inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
				var err error
				id, err = ports.Repository[ports.PublicationRepository](tx).LastInLine(ctx, product, store)
				return err
			})
			return id
		}
		require.Equal(t, uuid.Nil, last(), "an empty line")
		first := newPublication(ws, product, store)
		require.NoError(t, publicationTable.create(t, h, first))
		require.Equal(t, first.ID, last())
		second := newPublication(ws, product, store)
		second.WaitsBehind = first.ID
		require.NoError(t, publicationTable.create(t, h, second), "both pending at once")
		require.Equal(t, second.ID, last())
		// Older than second, but nobody waits behind it either: the line
		// is the links, not the clock (publications made before them
		// aside, which go by the newest).
		third := newPublication(ws, product, store)
		third.WaitsBehind, third.CreatedAt, third.UpdatedAt = second.ID, first.CreatedAt, first.CreatedAt
		require.NoError(t, publicationTable.create(t, h, third))
		require.Equal(t, third.ID, last())
		got, err := publicationTable.get(t, h, ws, third.ID)
		require.NoError(t, err)
		require.Equal(t, second.ID, got.WaitsBehind)
	})

	t.Run("the key is the product and the store: another store, or another product, is fine", func(t *testing.T) {
		ws := newWorkspace(t, h)
		product, store := newProductIn(t, h, ws).ID, newStoreIn(t, h, ws)
		require.NoError(t, publicationTable.create(t, h, newPublication(ws, product, store)))
		require.NoError(t, publicationTable.create(t, h, newPublication(ws, product, newStoreIn(t, h, ws))))
		require.NoError(t, publicationTable.create(t, h, newPublication(ws, newProductIn(t, h, ws).ID, store)))
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

// The publications kind's contract (kinds.go).
var _ = registerKind("publications", kindContract{
	table: publicationTable.check, own: testPublications,
	list: listing(byStatus(publicationTable, publicationTable.status, model.TaskSucceeded, model.TaskFailed)),
})
