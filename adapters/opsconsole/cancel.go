package opsconsole

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// operationView is an operation an operator cancelled or looks at for its
// cancel: cancelled, or running with its cancel requested (its job stops
// where its kind can).
type operationView struct {
	ID                uuid.UUID  `json:"id"`
	Workspace         uuid.UUID  `json:"workspace_id"`
	Kind              string     `json:"kind"`
	Status            string     `json:"status"`
	CancelRequestedAt *time.Time `json:"cancel_requested_at,omitempty"`
	UpdatedAt         time.Time  `json:"updated_at"`
}

// cancel cancels an operation with the public API's use case: a second
// cancel answers as the first, a finished operation is 409
// OPERATION_FINISHED.
func (h *handler) cancel(r *http.Request) (any, []any, error) {
	workspace, id, err := pathIDs(r, "operation")
	audit := []any{"action", "cancel", "workspace", workspace, "operation", id}
	if err != nil {
		return nil, audit, err
	}
	op, err := h.console.Cancel(r.Context(), workspace, id)
	if err != nil {
		return nil, audit, err
	}
	v := toOperationView(op)
	return v, append(audit, "status", v.Status), nil
}

func toOperationView(op model.Operation) operationView {
	v := operationView{ID: op.ID, Workspace: op.WorkspaceID, Kind: op.Kind, Status: string(op.Status), UpdatedAt: op.UpdatedAt}
	if op.CancelRequested() {
		at := op.CancelRequestedAt
		v.CancelRequestedAt = &at
	}
	return v
}

type cancelsView struct {
	Cancelled []operationView `json:"cancelled"`
	Stopping  []operationView `json:"stopping"`
	snapshot
}

// cancels shows a workspace's recent cancels.
func (h *handler) cancels(r *http.Request) (any, []any, error) {
	audit := []any{"action", "view_cancels"}
	workspace, err := uuid.Parse(r.PathValue("workspace"))
	if err != nil {
		return nil, audit, domain.Errorf(domain.CodeValidation, "the workspace id must be a UUID")
	}
	audit = append(audit, "workspace", workspace)
	c, err := h.console.Cancels(r.Context(), workspace)
	if err != nil {
		return nil, audit, err
	}
	v := cancelsView{Cancelled: make([]operationView, len(c.Cancelled)), Stopping: make([]operationView, len(c.Stopping)),
		snapshot: h.snapshot(false)}
	for i, op := range c.Cancelled {
		v.Cancelled[i] = toOperationView(op)
	}
	for i, op := range c.Stopping {
		v.Stopping[i] = toOperationView(op)
	}
	return v, append(audit, "count", len(c.Cancelled)+len(c.Stopping)), nil
}
