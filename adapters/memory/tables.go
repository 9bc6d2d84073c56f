package memory

import (
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The tables no task kind owns: workspaces, operations and products, with
// their repositories in one transaction and their Tx accessors. A task
// kind's table (and what it owns) is declared in the kind's own file
// (stores.go, media.go, material.go, publications.go, syncs.go, ai.go),
// its rows registered there by newRows, so a new kind adds no line here.

type (
	workspaceRepo struct{ tableRepo[model.Workspace] }
	operationRepo struct{ tableRepo[model.Operation] }
	productRepo   struct{ tableRepo[model.Product] }
)

func (t *tx) Workspaces() ports.WorkspaceRepository { return workspaceRepo{workspaceTable.in(t)} }
func (t *tx) Operations() ports.OperationRepository { return operationRepo{operationTable.in(t)} }
func (t *tx) Products() ports.ProductRepository     { return productRepo{productTable.in(t)} }

// workspaceTable is the workspaces table. A workspace is its own
// workspace: a transaction sees only the one it runs in.
var workspaceTable = table[model.Workspace]{
	noun: "workspace", pkey: "workspaces_pkey", copy: copyWorkspace,
	rows: newRows[uuid.UUID, model.Workspace](),
	ids:  func(w model.Workspace) (uuid.UUID, uuid.UUID) { return w.ID, w.ID },
}

// operationTable is the operations table.
var operationTable = table[model.Operation]{
	noun: "operation", pkey: "operations_pkey", copy: copyOperation,
	rows: newRows[uuid.UUID, model.Operation](),
	ids:  func(op model.Operation) (uuid.UUID, uuid.UUID) { return op.ID, op.WorkspaceID },
}

// productTable is the products table.
var productTable = table[model.Product]{
	noun: "product", pkey: "products_pkey", copy: copyProduct,
	rows: newRows[uuid.UUID, model.Product](),
	ids:  func(p model.Product) (uuid.UUID, uuid.UUID) { return p.ID, p.WorkspaceID },
}
