package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type workspaceRepo struct{ t *tx }

var _ ports.WorkspaceRepository = workspaceRepo{}

func workspaceKey(id uuid.UUID) uniqueKey { return uniqueKey{"workspaces_pkey", id.String()} }

func (r workspaceRepo) Create(_ context.Context, w model.Workspace) error {
	t := r.t
	if err := t.lockOwn("workspace", w.ID); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if !t.db.reserveLocked(t, workspaceKey(w.ID)) {
		return domain.Errorf(domain.CodeConflict, "workspace %s already exists", w.ID)
	}
	t.workspaces[w.ID] = copyWorkspace(w)
	return nil
}

func (r workspaceRepo) Get(_ context.Context, id uuid.UUID) (model.Workspace, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return model.Workspace{}, err
	}
	defer t.db.mu.Unlock()
	if id == t.workspace {
		if w, ok := t.workspaces[id]; ok {
			return copyWorkspace(w), nil
		}
		if w, ok := t.db.workspaces[id]; ok {
			return copyWorkspace(w), nil
		}
	}
	return model.Workspace{}, domain.Errorf(domain.CodeNotFound, "workspace %s not found", id)
}
