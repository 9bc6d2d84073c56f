package memory

import (
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// The tables of the memory database, in one list: how each names its rows
// in errors, its primary key, where its rows are kept (taskRows), how a
// row is keyed and copied, and the live index of the task tables that have
// one. Their repositories are in the files named after them.

// workspaceTable is the workspaces table. A workspace is its own
// workspace: a transaction sees only the one it runs in.
var workspaceTable = table[model.Workspace]{
	noun: "workspace", pkey: "workspaces_pkey", copy: copyWorkspace,
	rows: func(r *taskRows) map[uuid.UUID]model.Workspace { return r.workspaces },
	ids:  func(w model.Workspace) (uuid.UUID, uuid.UUID) { return w.ID, w.ID },
}

// operationTable is the operations table.
var operationTable = table[model.Operation]{
	noun: "operation", pkey: "operations_pkey", copy: copyOperation,
	rows: func(r *taskRows) map[uuid.UUID]model.Operation { return r.operations },
	ids:  func(op model.Operation) (uuid.UUID, uuid.UUID) { return op.ID, op.WorkspaceID },
}

// storeTable is the stores table; its shop key is not a live index (a
// store holds it for good), so Create checks it itself.
var storeTable = table[model.Store]{
	noun: "store", pkey: "stores_pkey", copy: copyStore,
	rows: func(r *taskRows) map[uuid.UUID]model.Store { return r.stores },
	ids:  func(s model.Store) (uuid.UUID, uuid.UUID) { return s.ID, s.WorkspaceID },
}

// productTable is the products table.
var productTable = table[model.Product]{
	noun: "product", pkey: "products_pkey", copy: copyProduct,
	rows: func(r *taskRows) map[uuid.UUID]model.Product { return r.products },
	ids:  func(p model.Product) (uuid.UUID, uuid.UUID) { return p.ID, p.WorkspaceID },
}

// mediaTable is the media table.
var mediaTable = table[model.Media]{
	noun: "media", pkey: "media_pkey", copy: copyMedia,
	rows: func(r *taskRows) map[uuid.UUID]model.Media { return r.media },
	ids:  func(m model.Media) (uuid.UUID, uuid.UUID) { return m.ID, m.WorkspaceID },
}

// transferTable is the material_transfers table; its items are rows of
// their own (transferItems), so its rows hold none.
var transferTable = taskTable[model.MaterialTransfer]("material transfer", "material_transfers_pkey",
	func(r *taskRows) map[uuid.UUID]model.MaterialTransfer { return r.transfers }, nil)

// publicationTable is the publications table. Its live index is the partial
// unique index of PostgreSQL: one publication per (workspace, product,
// store) that is not failed.
var publicationTable = taskTable[model.Publication]("publication", "publications_pkey",
	func(r *taskRows) map[uuid.UUID]model.Publication { return r.publications },
	&liveIndex[model.Publication]{
		holds: func(p model.Publication) bool { return p.Status != model.TaskFailed },
		key: func(p model.Publication) uniqueKey {
			return uniqueKey{"publications_active_key",
				p.WorkspaceID.String() + "\x00" + p.ProductID.String() + "\x00" + p.StoreID.String()}
		},
		taken: func(p model.Publication) *domain.Error {
			return domain.Errorf(domain.CodeAlreadyPublished, "product %s is already published to store %s", p.ProductID, p.StoreID)
		},
	})

// syncTable is the catalog_syncs table. Its live index is the partial unique
// index of PostgreSQL: one pending or running sync per (workspace, store).
var syncTable = taskTable[model.CatalogSync]("catalog sync", "catalog_syncs_pkey",
	func(r *taskRows) map[uuid.UUID]model.CatalogSync { return r.syncs },
	&liveIndex[model.CatalogSync]{
		holds: func(s model.CatalogSync) bool { return s.Status.Active() },
		key: func(s model.CatalogSync) uniqueKey {
			return uniqueKey{"catalog_syncs_active_key", s.WorkspaceID.String() + "\x00" + s.StoreID.String()}
		},
		taken: func(s model.CatalogSync) *domain.Error {
			return domain.Errorf(domain.CodeSyncAlreadyActive, "store %s already has an active catalog sync", s.StoreID)
		},
	})

// aiTaskTable is the ai_tasks table.
var aiTaskTable = taskTable[model.AITask]("AI task", "ai_tasks_pkey",
	func(r *taskRows) map[uuid.UUID]model.AITask { return r.aiTasks }, nil)
