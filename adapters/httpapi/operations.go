package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/ports"
)

// Operation is asynchronous work as clients see it.
type Operation struct {
	ID           uuid.UUID `json:"id" format:"uuid"`
	Kind         string    `json:"kind" example:"store.verify"`
	Status       string    `json:"status" enum:"pending,running,succeeded,failed,cancelled"`
	ResourceType string    `json:"resource_type" example:"store"`
	ResourceID   uuid.UUID `json:"resource_id" format:"uuid"`
	Error        string    `json:"error,omitempty" doc:"Why the operation failed; sanitized"`
	// CancelRequestedAt is set once a cancel reached the running job.
	CancelRequestedAt *time.Time `json:"cancel_requested_at,omitempty" doc:"When a cancel was asked for while the job ran: it stops where its kind can, otherwise the operation ends with what the external system did"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	// Delivery is absent once the delivered event was cleaned up.
	Delivery *OperationDelivery `json:"delivery,omitempty" doc:"How the delivery of the operation's job is going; absent once its event is cleaned up"`
}

// OperationDelivery tells a user why an operation may stay pending: its
// job's event is waiting for another attempt, or parked for an operator.
type OperationDelivery struct {
	Status        string     `json:"status" enum:"pending,dispatching,dispatched,dead_letter" doc:"pending: waiting for (another) attempt; dispatching: being handed to the workers; dispatched: handed to the workers; dead_letter: parked for an operator, who can re-drive it"`
	Attempts      int        `json:"attempts" doc:"Failed delivery attempts so far"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty" doc:"When the next attempt is due; only while pending"`
	LastError     string     `json:"last_error,omitempty" doc:"The last failure, sanitized; absent once the operation succeeded (its waits on the way are history)"`
}

type GetOperationInput struct {
	ID   uuid.UUID `path:"id" format:"uuid" doc:"The operation id"`
	Wait string    `query:"wait" pattern:"^[0-9]{1,6}(ms|s)?$" example:"25s" doc:"Wait up to this long for the operation to end before answering: seconds (25 or 25s) or milliseconds (500ms), at most 25s (longer waits are cut to 25s). The answer comes as soon as the operation is succeeded, failed or cancelled, or with its current state when the wait is over; ask again while it is pending or running. Absent or 0: answer at once. Over the server's cap on waiting reads: 429 TOO_MANY_WAITERS"`
}

// waitOf reads the wait parameter, which the pattern made a number of
// seconds or, with ms, milliseconds.
func waitOf(s string) time.Duration {
	unit := time.Second
	if ms, ok := strings.CutSuffix(s, "ms"); ok {
		s, unit = ms, time.Millisecond
	}
	n, _ := strconv.Atoi(strings.TrimSuffix(s, "s"))
	return min(time.Duration(n)*unit, operations.MaxWait)
}

type OperationOutput struct {
	Body Operation
}

// OperationCanceller cancels operations (jobs.Failures.Cancel) in the
// request's transaction.
type OperationCanceller interface {
	Cancel(ctx context.Context, tx ports.Tx, id uuid.UUID) (model.Operation, error)
}

type CancelOperationInput struct {
	IdempotencyKeyHeader
	ID uuid.UUID `path:"id" format:"uuid" doc:"The operation id"`
}

// ListOperationsInput is a list's paging and filters, and before, the
// cursor of the release before the lists shared one shape: kept, deprecated,
// for one release.
type ListOperationsInput struct {
	ListParams
	Status string    `query:"status" enum:"pending,running,succeeded,failed,cancelled" doc:"Only operations in this state"`
	Kind   string    `query:"kind" maxLength:"100" doc:"Only operations of this kind" example:"listing.publish"`
	Before uuid.UUID `query:"before" format:"uuid" deprecated:"true" doc:"Deprecated alias of starting_after, removed in the next release"`
}

// OperationList is a page of operations: ListOf's fields and next_before,
// the cursor of the release before, deprecated.
type OperationList struct {
	Items   []Operation `json:"items"`
	HasMore bool        `json:"has_more" doc:"Older items exist: ask again with starting_after = the id of the last item"`
	// NextBefore is empty on the last page.
	NextBefore string `json:"next_before,omitempty" format:"uuid" deprecated:"true" doc:"Deprecated: the id of the last item while has_more is true; pass it as starting_after. Removed in the next release"`
}

type ListOperationsOutput struct {
	Body OperationList
}

func toOperation(op model.Operation) Operation {
	out := Operation{
		ID: op.ID, Kind: op.Kind, Status: string(op.Status), ResourceType: op.ResourceType,
		ResourceID: op.ResourceID, Error: op.Error, CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt,
	}
	if op.CancelRequested() {
		at := op.CancelRequestedAt
		out.CancelRequestedAt = &at
	}
	if d := op.Delivery; d != nil {
		out.Delivery = &OperationDelivery{Status: string(d.Status), Attempts: d.Attempts, LastError: d.LastError}
		if !d.NextAttemptAt.IsZero() {
			at := d.NextAttemptAt
			out.Delivery.NextAttemptAt = &at
		}
	}
	return out
}

func (h *handlers) registerOperations(api huma.API) {
	read := get("getOperation", "/v1/operations/{id}", "operations", "Read an operation",
		"Follow asynchronous work from pending to running to succeeded, failed or cancelled: with wait, the answer comes as soon as the operation ends (or when the wait is over), from whichever server the request reaches; without, at once. delivery says how the delivery of its job goes: an operation that stays pending shows its failed attempts, the next attempt time and the last error, or that its job waits for an operator (dead_letter).",
		401, 403, 404, 422, 500, 503)
	// The use case admits each of its reads, not the wait between them.
	read.Metadata = map[string]any{admitsItselfMeta: true}
	huma.Register(api, needs(model.ScopeOperationsRead, read), h.getOperation)
	huma.Register(api, needs(model.ScopeOperationsRead, get("listOperations", "/v1/operations", "operations", "List operations",
		"Newest first, filtered by status and kind; pass the id of the last item as starting_after for the next page while has_more is true.",
		401, 403, 422, 500, 503)), h.listOperations)
	deprecateListParameter(api, "/v1/operations", "before")
	registerIdempotent(api, needs(model.ScopeOperationsWrite, huma.Operation{
		OperationID: "cancelOperation",
		Method:      http.MethodPost,
		Path:        "/v1/operations/{id}/cancel",
		Summary:     "Cancel an operation",
		Description: "A pending operation (its job not started) ends cancelled at once: its job never calls the external system, and its waiting retries and redelivered messages do nothing. " +
			"A running one records cancel_requested_at and stays running: its job stops before it calls the external system again, ending cancelled, and otherwise ends with what the external system did (succeeded or failed, recorded truthfully). " +
			"Cancelling a cancelled operation answers the same; a succeeded or failed one is 409 OPERATION_FINISHED.",
		Tags:          []string{"operations"},
		DefaultStatus: http.StatusOK,
		Security:      bearer,
		Errors:        []int{400, 401, 403, 404, 409, 422, 500, 503},
	}), h.deps.MaxBodyBytes, h.cancelOperation)
}

func (h *handlers) cancelOperation(ctx context.Context, in *CancelOperationInput) (*IdempotentOutput[Operation], error) {
	return runIdempotent(ctx, h.deps.Idempotency, nil,
		func(ctx context.Context, tx ports.Tx, _ model.Principal) (int, string, Operation, error) {
			op, err := h.deps.Cancel.Cancel(ctx, tx, in.ID)
			if err != nil {
				return 0, "", Operation{}, err
			}
			return http.StatusOK, "", toOperation(op), nil
		})
}

func (h *handlers) listOperations(ctx context.Context, in *ListOperationsInput) (*ListOperationsOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	cursor := in.StartingAfter
	switch {
	case in.Before == uuid.Nil:
	case cursor == uuid.Nil:
		cursor = in.Before
	case cursor != in.Before:
		return nil, toProblem(ctx, domain.Errorf(domain.CodeValidation, "before is the deprecated name of starting_after: give one of them"))
	}
	page, err := h.deps.Operations.List(ctx, p, ports.ListQuery{
		StartingAfter: cursor, Limit: in.Limit, Status: in.Status, Kind: in.Kind,
	})
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	out := &ListOperationsOutput{Body: OperationList{Items: make([]Operation, 0, len(page.Items)), HasMore: page.HasMore}}
	for _, op := range page.Items {
		out.Body.Items = append(out.Body.Items, toOperation(op))
	}
	if page.HasMore {
		out.Body.NextBefore = page.Items[len(page.Items)-1].ID.String()
	}
	return out, nil
}

func (h *handlers) getOperation(ctx context.Context, in *GetOperationInput) (*OperationOutput, error) {
	wait := waitOf(in.Wait)
	read := func(ctx context.Context, p model.Principal, id uuid.UUID) (model.Operation, error) {
		return h.deps.Operations.Wait(ctx, p, id, wait)
	}
	return getOne(ctx, in.ID, read, func(op model.Operation) *OperationOutput {
		return &OperationOutput{Body: toOperation(op)}
	})
}
