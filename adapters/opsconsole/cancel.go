package opsconsole

import (
	"net/http"
	"time"

	"github.com/google/uuid"
)

// cancelledView is an operation after an operator's cancel: cancelled, or
// running with its cancel requested (its job stops where its kind can).
type cancelledView struct {
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
	v := cancelledView{ID: op.ID, Workspace: op.WorkspaceID, Kind: op.Kind, Status: string(op.Status), UpdatedAt: op.UpdatedAt}
	if op.CancelRequested() {
		at := op.CancelRequestedAt
		v.CancelRequestedAt = &at
	}
	return v, append(audit, "status", v.Status), nil
}
