package memory

import (
	"bytes"
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type operationRepo struct{ t *tx }

var _ ports.OperationRepository = operationRepo{}

func operationKey(id uuid.UUID) uniqueKey { return uniqueKey{"operations_pkey", id.String()} }

func (r operationRepo) Create(_ context.Context, op model.Operation) error {
	t := r.t
	if err := t.lockOwn("operation", op.WorkspaceID); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if !t.db.reserveLocked(t, operationKey(op.ID)) {
		return domain.Errorf(domain.CodeConflict, "operation %s already exists", op.ID)
	}
	t.operations[op.ID] = copyOperation(op)
	return nil
}

func (r operationRepo) Get(_ context.Context, id uuid.UUID) (model.Operation, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return model.Operation{}, err
	}
	defer t.db.mu.Unlock()
	op, ok := r.visibleLocked(id)
	if !ok {
		return model.Operation{}, operationNotFound(id)
	}
	return copyOperation(op), nil
}

func (r operationRepo) Update(_ context.Context, op model.Operation) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	cur, ok := r.visibleLocked(op.ID)
	if !ok {
		return operationNotFound(op.ID)
	}
	cur.Status = op.Status
	cur.Error = op.Error
	cur.UpdatedAt = op.UpdatedAt
	t.operations[op.ID] = copyOperation(cur)
	return nil
}

func (r operationRepo) List(_ context.Context, f ports.OperationFilter) ([]model.Operation, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return nil, err
	}
	defer t.db.mu.Unlock()
	if f.Limit <= 0 {
		return nil, nil
	}
	var out []model.Operation
	add := func(op model.Operation) {
		switch {
		case op.WorkspaceID != t.workspace,
			f.Status != "" && op.Status != f.Status,
			f.Kind != "" && op.Kind != f.Kind,
			f.Before != uuid.Nil && bytes.Compare(op.ID[:], f.Before[:]) >= 0:
			return
		}
		out = append(out, copyOperation(op))
	}
	for id, op := range t.db.operations {
		if _, mine := t.operations[id]; !mine {
			add(op)
		}
	}
	for _, op := range t.operations {
		add(op)
	}
	// Newest first by id, as PostgreSQL orders uuids: byte by byte.
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].ID[:], out[j].ID[:]) > 0 })
	if len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// visibleLocked returns the operation as this tx sees it: its own write,
// else the committed row, and only if it belongs to the tx's workspace.
func (r operationRepo) visibleLocked(id uuid.UUID) (model.Operation, bool) {
	op, ok := r.t.operations[id]
	if !ok {
		op, ok = r.t.db.operations[id]
	}
	if !ok || op.WorkspaceID != r.t.workspace {
		return model.Operation{}, false
	}
	return op, true
}

func operationNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "operation %s not found", id)
}
