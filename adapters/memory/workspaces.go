package memory

import (
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// workspaceTable is the workspaces table. A workspace is its own
// workspace: a transaction sees only the one it runs in.
var workspaceTable = table[model.Workspace]{
	noun: "workspace", pkey: "workspaces_pkey", copy: copyWorkspace,
	rows: func(r *taskRows) map[uuid.UUID]model.Workspace { return r.workspaces },
	ids:  func(w model.Workspace) (uuid.UUID, uuid.UUID) { return w.ID, w.ID },
}
