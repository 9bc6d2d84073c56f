package contract

import (
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
	full:      func(p *model.Publication) { p.ExternalListingID = "listing-1" },
	updates:   "replaces status, listing id, reason and updated_at only",
	mutable:   func(p *model.Publication) { p.ExternalListingID = "L-9" },
	immutable: func(p *model.Publication) { p.ProductRevision = 9 },
})

func newPublication(ws, product, store uuid.UUID) model.Publication {
	at := writeTime()
	return model.Publication{TaskState: newTaskState(ws, at), ProductID: product, StoreID: store, ProductRevision: 3}
}

// publicationLive is the publications table to the live key contract
// (live.go): one live publication of a product to a store, a succeeded one
// included; only a failed one makes way.
var publicationLive = liveKey[model.Publication]{
	table: publicationTable,
	twin: func(p model.Publication) model.Publication {
		return newPublication(p.WorkspaceID, p.ProductID, p.StoreID)
	},
	taken:   domain.CodeAlreadyPublished,
	holding: []model.TaskStatus{model.TaskPending, model.TaskRunning, model.TaskSucceeded},
	freeing: []model.TaskStatus{model.TaskFailed},
}

func testPublications(t *testing.T, h Harness) {
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
	table: publicationTable.check, live: publicationLive.check, own: testPublications,
	list: listing(byStatus(publicationTable, publicationTable.status, model.TaskSucceeded, model.TaskFailed)),
})
