package opsconsole

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operator"
)

// The JSON the page reads. Dead letters are shown with ids, types, counts
// and the sanitized last error; the payload only in the view of one, and
// only when it passes the secret guard (operator.ShownPayload).

type workspaceBacklog struct {
	Workspace        uuid.UUID `json:"workspace_id"`
	Pending          int64     `json:"pending"`
	Dispatching      int64     `json:"dispatching"`
	DeadLetter       int64     `json:"dead_letter"`
	OldestDueSeconds float64   `json:"oldest_due_age_seconds"`
}

// snapshot is what a view of a list says about its reading: whether the
// list was cut at its limit, and when it was read.
type snapshot struct {
	Truncated bool      `json:"truncated"`
	AsOf      time.Time `json:"as_of"`
}

func (h *handler) snapshot(truncated bool) snapshot {
	return snapshot{Truncated: truncated, AsOf: h.clock.Now()}
}

type backlogView struct {
	Workspaces []workspaceBacklog `json:"workspaces"`
	Totals     workspaceBacklog   `json:"totals"`
	snapshot
}

type eventSummary struct {
	ID            uuid.UUID `json:"id"`
	Workspace     uuid.UUID `json:"workspace_id"`
	EventType     string    `json:"event_type"`
	AggregateType string    `json:"aggregate_type"`
	AggregateID   uuid.UUID `json:"aggregate_id"`
	// AttemptCount is the Dispatcher's: publishes the broker refused and
	// expired leases taken over. A job the worker ran and gave up on may
	// have none; its own runs are JobAttempts.
	AttemptCount int `json:"attempt_count"`
	// JobAttempts is how many times the worker ran the job before it gave
	// up on it (its first run and its retries); absent when the worker
	// did not give up on it.
	JobAttempts *int      `json:"job_attempts,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

type groupView struct {
	Key        string         `json:"key"`
	Stage      string         `json:"stage"`
	Cause      string         `json:"cause"`
	Example    string         `json:"example"`
	EventTypes []string       `json:"event_types"`
	Workspaces int            `json:"workspaces"`
	Count      int            `json:"count"`
	Events     []eventSummary `json:"events"`
}

type deadLettersView struct {
	Groups []groupView `json:"groups"`
	Total  int         `json:"total"`
	snapshot
}

type deadLetterView struct {
	eventSummary
	OperationID *uuid.UUID `json:"operation_id,omitempty"`
	Stage       string     `json:"stage"`
	// HoldsOrderingKey is the job's ordering key: a dead letter holds its
	// key's later jobs until it is re-driven or released.
	HoldsOrderingKey string          `json:"holds_ordering_key,omitempty"`
	LastError        string          `json:"last_error"`
	Payload          json.RawMessage `json:"payload,omitempty"`
	PayloadWithheld  bool            `json:"payload_withheld"`
}

type redrivenView struct {
	Redriven int `json:"redriven"`
}

func summary(e model.OutboxEvent) eventSummary {
	s := eventSummary{ID: e.ID, Workspace: e.WorkspaceID, EventType: e.Type, AggregateType: e.AggregateType,
		AggregateID: e.AggregateID, AttemptCount: e.AttemptCount, CreatedAt: e.CreatedAt}
	if e.FailedIn == model.FailedInJob {
		n := e.JobAttempts
		s.JobAttempts = &n
	}
	return s
}

func (h *handler) backlog(r *http.Request) (any, []any, error) {
	b, err := h.console.Backlog(r.Context())
	audit := []any{"action", "view_backlog"}
	if err != nil {
		return nil, audit, err
	}
	v := backlogView{Workspaces: make([]workspaceBacklog, len(b.Workspaces)), snapshot: h.snapshot(b.Truncated)}
	for i, w := range b.Workspaces {
		v.Workspaces[i] = workspaceBacklog{Workspace: w.Workspace, Pending: w.Pending, Dispatching: w.Dispatching,
			DeadLetter: w.DeadLetter, OldestDueSeconds: w.OldestDueAge.Seconds()}
		v.Totals.Pending += w.Pending
		v.Totals.Dispatching += w.Dispatching
		v.Totals.DeadLetter += w.DeadLetter
		v.Totals.OldestDueSeconds = max(v.Totals.OldestDueSeconds, w.OldestDueAge.Seconds())
	}
	return v, append(audit, "workspaces", len(b.Workspaces)), nil
}

func (h *handler) deadLetters(r *http.Request) (any, []any, error) {
	dl, err := h.console.DeadLetters(r.Context())
	audit := []any{"action", "view_dead_letters"}
	if err != nil {
		return nil, audit, err
	}
	v := deadLettersView{Groups: make([]groupView, len(dl.Groups)), Total: dl.Total, snapshot: h.snapshot(dl.Truncated)}
	for i, g := range dl.Groups {
		events := make([]eventSummary, len(g.Events))
		for j, e := range g.Events {
			events[j] = summary(e)
		}
		v.Groups[i] = groupView{Key: g.Key, Stage: g.Stage, Cause: g.Cause, Example: g.Example, EventTypes: g.EventTypes,
			Workspaces: g.Workspaces, Count: len(g.Events), Events: events}
	}
	return v, append(audit, "groups", len(dl.Groups), "count", dl.Total), nil
}

func (h *handler) deadLetter(r *http.Request) (any, []any, error) {
	workspace, id, err := pathIDs(r, "event")
	audit := []any{"action", "view", "workspace", workspace, "ids", []uuid.UUID{id}}
	if err != nil {
		return nil, audit, err
	}
	e, err := h.console.DeadLetter(r.Context(), workspace, id)
	if err != nil {
		return nil, audit, err
	}
	v := deadLetterView{eventSummary: summary(e), Stage: dispatch.Stage(e), HoldsOrderingKey: e.OrderingKey,
		LastError: e.LastError, Payload: operator.ShownPayload(e)}
	v.PayloadWithheld = v.Payload == nil && len(e.Payload) > 0
	if op, ok := model.JobOperationID(e.Payload); ok {
		v.OperationID = &op
	}
	return v, append(audit, "count", 1), nil
}

func (h *handler) redriveOne(r *http.Request) (any, []any, error) {
	workspace, id, err := pathIDs(r, "event")
	audit := []any{"action", "redrive", "workspace", workspace, "ids", []uuid.UUID{id}}
	if err != nil {
		return nil, audit, err
	}
	n, err := h.console.Redrive(r.Context(), workspace, []uuid.UUID{id})
	return redrivenView{Redriven: n}, append(audit, "count", n), err
}

type releasedView struct {
	Released int `json:"released"`
}

func (h *handler) releaseOne(r *http.Request) (any, []any, error) {
	workspace, id, err := pathIDs(r, "event")
	audit := []any{"action", "release", "workspace", workspace, "ids", []uuid.UUID{id}}
	if err != nil {
		return nil, audit, err
	}
	n, err := h.console.Release(r.Context(), workspace, []uuid.UUID{id})
	return releasedView{Released: n}, append(audit, "count", n), err
}

func (h *handler) redriveGroup(r *http.Request) (any, []any, error) {
	var in struct {
		Key string `json:"key"`
	}
	audit := []any{"action", "redrive_group"}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Key == "" {
		return nil, audit, domain.Errorf(domain.CodeValidation, `the body must be {"key": "<group key>"}`)
	}
	audit = append(audit, "group", in.Key)
	moved, err := h.console.RedriveGroup(r.Context(), in.Key)
	workspaces := make([]uuid.UUID, 0, len(moved.ByWorkspace))
	var ids []uuid.UUID
	for ws, wsIDs := range moved.ByWorkspace {
		workspaces = append(workspaces, ws)
		ids = append(ids, wsIDs...)
	}
	audit = append(audit, "workspace", workspaces, "ids", ids, "count", moved.Count)
	return redrivenView{Redriven: moved.Count}, audit, err
}
