package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/ports"
)

// DeadLetters is what operators do with events that failed too often;
// they are listed as every list is (pagination.List).
type DeadLetters interface {
	// Redrive returns the events (nil: all) to pending and says how many.
	Redrive(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error)
}

// DeadLetter is a parked event as operators see it. The payload is left out:
// it holds ids only, and operators act on the event id.
type DeadLetter struct {
	ID            uuid.UUID `json:"id" format:"uuid"`
	EventType     string    `json:"event_type" example:"store.credentials.verify"`
	AggregateType string    `json:"aggregate_type" example:"store"`
	AggregateID   uuid.UUID `json:"aggregate_id" format:"uuid"`
	OperationID   uuid.UUID `json:"operation_id,omitempty" format:"uuid" doc:"The operation whose job the event carries"`
	Stage         string    `json:"stage" enum:"delivery,job" doc:"delivery: the Dispatcher could not publish it; job: it was delivered and the worker gave up on its job (task and operation failed)"`
	AttemptCount  int       `json:"attempt_count" doc:"Delivery attempts"`
	LastError     string    `json:"last_error" doc:"The last failure, sanitized and bounded"`
	CreatedAt     time.Time `json:"created_at"`
}

// DeadLetterGroup is the listed dead letters that failed for one reason.
type DeadLetterGroup struct {
	LastError string      `json:"last_error"`
	Count     int         `json:"count"`
	EventIDs  []uuid.UUID `json:"event_ids"`
}

// DeadLetterList is a page of dead letters: ListOf's fields and the page's
// groups.
type DeadLetterList struct {
	Items   []DeadLetter      `json:"items"`
	HasMore bool              `json:"has_more" doc:"Older items exist: ask again with starting_after = the id of the last item"`
	Groups  []DeadLetterGroup `json:"groups" doc:"The listed items grouped by last error, the largest group first"`
}

type ListDeadLettersInput struct {
	ListParams
}

type ListDeadLettersOutput struct {
	Body DeadLetterList
}

type RedriveOneInput struct {
	ID uuid.UUID `path:"id" format:"uuid" doc:"The dead-lettered event"`
}

type Redriven struct {
	Redriven int `json:"redriven" doc:"How many events went back to pending"`
}

type RedriveOutput struct {
	Body Redriven
}

// registerDeadLetters registers the dead-letter routes; their outbox
// scopes are the admins' only, which requireScope checks before a handler
// runs.
func (h *handlers) registerDeadLetters(api huma.API) {
	errs := []int{401, 403, 500, 503}
	huma.Register(api, needs(model.ScopeOutboxRead, get("listDeadLetters", "/v1/outbox/dead-letters", "outbox", "List dead-lettered outbox events",
		"Events whose delivery failed too often, and events whose job a worker gave up on (its task and operation failed), with the sanitized last error, also grouped by it. Newest first; pass the id of the last item as starting_after for the next page while has_more is true. Workspace admins only.",
		append([]int{422}, errs...)...)), h.listDeadLetters)
	huma.Register(api, needs(model.ScopeOutboxWrite, huma.Operation{
		OperationID: "redriveDeadLetter",
		Method:      http.MethodPost,
		Path:        "/v1/outbox/dead-letters/{id}/redrive",
		Summary:     "Re-drive one dead-lettered event",
		Description: "Returns the event to pending with its attempts reset; the Dispatcher delivers it again. A job the worker gave up on is reopened first: its task and operation go back to pending and end when the job runs. Safe to repeat: an event that is not dead-lettered is left alone. Workspace admins only.",
		Tags:        []string{"outbox"},
		Security:    bearer,
		Errors:      append([]int{404, 422}, errs...),
	}), h.redriveOne)
	huma.Register(api, needs(model.ScopeOutboxWrite, huma.Operation{
		OperationID: "redriveAllDeadLetters",
		Method:      http.MethodPost,
		Path:        "/v1/outbox/dead-letters/redrive",
		Summary:     "Re-drive every dead-lettered event of the workspace",
		Description: "Safe to repeat. Workspace admins only.",
		Tags:        []string{"outbox"},
		Security:    bearer,
		Errors:      errs,
	}), h.redriveAll)
}

func (h *handlers) listDeadLetters(ctx context.Context, in *ListDeadLettersInput) (*ListDeadLettersOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	page, err := pagination.List(ctx, h.deps.Lists, p, ports.ListQuery{StartingAfter: in.StartingAfter, Limit: in.Limit},
		func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.OutboxEvent, error) {
			return tx.Outbox().ListDeadLetters
		})
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	out := &ListDeadLettersOutput{Body: DeadLetterList{
		Items: make([]DeadLetter, 0, len(page.Items)), HasMore: page.HasMore, Groups: []DeadLetterGroup{},
	}}
	for _, e := range page.Items {
		opID, _ := model.JobOperationID(e.Payload)
		out.Body.Items = append(out.Body.Items, DeadLetter{
			ID: e.ID, EventType: e.Type, AggregateType: e.AggregateType, AggregateID: e.AggregateID,
			OperationID: opID, Stage: dispatch.Stage(e),
			AttemptCount: e.AttemptCount, LastError: e.LastError, CreatedAt: e.CreatedAt,
		})
	}
	for _, g := range dispatch.GroupByError(page.Items) {
		out.Body.Groups = append(out.Body.Groups, DeadLetterGroup{LastError: g.LastError, Count: len(g.EventIDs), EventIDs: g.EventIDs})
	}
	return out, nil
}

func (h *handlers) redriveOne(ctx context.Context, in *RedriveOneInput) (*RedriveOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	n, err := h.deps.DeadLetters.Redrive(ctx, p.WorkspaceID, []uuid.UUID{in.ID})
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &RedriveOutput{Body: Redriven{Redriven: n}}, nil
}

func (h *handlers) redriveAll(ctx context.Context, _ *struct{}) (*RedriveOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	n, err := h.deps.DeadLetters.Redrive(ctx, p.WorkspaceID, nil)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &RedriveOutput{Body: Redriven{Redriven: n}}, nil
}
