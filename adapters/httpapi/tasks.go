package httpapi

import (
	"context"
	"maps"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// post describes a POST operation that starts a background task: its
// id, path, tag, summary, description and error statuses. It answers 202
// Accepted unless the caller sets another DefaultStatus.
func post(operationID, path, tag, summary, description string, errors ...int) huma.Operation {
	return huma.Operation{
		OperationID: operationID, Method: http.MethodPost, Path: path, Tags: []string{tag},
		Summary: summary, Description: description, Errors: errors,
		DefaultStatus: http.StatusAccepted, Security: bearer,
	}
}

// created is op answering 201 Created: a POST that makes the resource it
// names rather than starting work on one.
func created(op huma.Operation) huma.Operation {
	op.DefaultStatus = http.StatusCreated
	return op
}

// registerTask registers the idempotent route that starts a background
// task of kind (op, see post): start runs the use case in the request's
// transaction and builds the answer (the task and its operation); the
// response's Location is where locate says the task (or its operation)
// is read. The key check, the replay, the fingerprint over the raw body
// and the spec come from registerIdempotent and runIdempotent, so a task
// type's route is this one call and its read route (registerRead).
func registerTask[I, A any](h *handlers, api huma.API, kind jobs.Kind, op huma.Operation, locate func(model.Operation) string,
	start func(ctx context.Context, tx ports.Tx, p model.Principal, in *I) (A, model.Operation, error),
) {
	op = startsTask(op, kind)
	registerIdempotent(api, op, h.deps.MaxBodyBytes, func(ctx context.Context, in *I) (*IdempotentOutput[A], error) {
		var check func(context.Context, model.Principal) error
		if c, ok := any(in).(checkedInput); ok {
			// Checks that wait on the network (DNS): once admitted,
			// before the idempotency claim opens a transaction, never
			// inside it.
			check = func(ctx context.Context, _ model.Principal) error { return c.check(ctx, h) }
		}
		return runIdempotentChecked(ctx, h.deps.Idempotency, rawBody(in), check,
			func(ctx context.Context, tx ports.Tx, p model.Principal) (int, string, A, error) {
				answer, operation, err := start(ctx, tx, p, in)
				if err != nil {
					return 0, "", answer, err
				}
				return op.DefaultStatus, locate(operation), answer, nil
			})
	})
}

// startsTaskKey is where an operation's metadata (never in the spec) names
// the event type of the task kind it starts.
const startsTaskKey = "once.starts_task"

// startsTask marks op as a route that starts tasks of kind, for
// TaskStarts.
func startsTask(op huma.Operation, kind jobs.Kind) huma.Operation {
	op.Metadata = maps.Clone(op.Metadata)
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[startsTaskKey] = kind.EventType
	return op
}

// TaskStarts lists, by the event type of each task kind, the operation
// ids of api's routes that start tasks of that kind, so a test can check
// that every kind the application declares can be started over HTTP.
func TaskStarts(api huma.API) map[string][]string {
	starts := map[string][]string{}
	for _, item := range api.OpenAPI().Paths {
		for _, op := range operationsOf(item) {
			if op == nil {
				continue
			}
			if event, ok := op.Metadata[startsTaskKey].(string); ok {
				starts[event] = append(starts[event], op.OperationID)
			}
		}
	}
	return starts
}

// checkedInput is the input of a route that checks it before the
// idempotency claim.
type checkedInput interface {
	check(ctx context.Context, h *handlers) error
}

// taskAt locates a task under prefix by the id its operation tracks.
func taskAt(prefix string) func(model.Operation) string {
	return func(op model.Operation) string { return prefix + op.ResourceID.String() }
}

// atOperation locates the operation itself.
func atOperation(op model.Operation) string { return operationLocation(op.ID) }

// rawBody is the request body as huma received it in the input's RawBody
// field, for the fingerprint; nil for an input without a body.
func rawBody(in any) []byte {
	f := reflect.ValueOf(in).Elem().FieldByName("RawBody")
	if !f.IsValid() {
		return nil
	}
	b, _ := f.Interface().([]byte)
	return b
}

// A task as clients see it shows its model.TaskState in two parts, so
// its own fields stand between them in the JSON: TaskHead first (itself,
// the operation that tracks it, where it is), TaskTimes last (why it
// failed, if it did, and when it was created and last changed).
type TaskHead struct {
	ID          uuid.UUID `json:"id" format:"uuid"`
	OperationID uuid.UUID `json:"operation_id" format:"uuid"`
	Status      string    `json:"status" enum:"pending,running,succeeded,failed"`
}

type TaskTimes struct {
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func taskHead(s model.TaskState) TaskHead {
	return TaskHead{ID: s.ID, OperationID: s.OperationID, Status: string(s.Status)}
}

func taskTimes(s model.TaskState) TaskTimes {
	return TaskTimes{Reason: s.Reason, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

// OperationAccepted is the answer to a request whose work runs in the
// background: the operation to poll. The answer of a request that starts
// a task (202 Accepted, e.g. CatalogSyncAccepted, beside the task's type)
// embeds it after the task under its own name.
type OperationAccepted struct {
	Operation Operation `json:"operation"`
}

// accepted is the answer for op, alone or beside the task it tracks.
func accepted(op model.Operation) OperationAccepted { return OperationAccepted{toOperation(op)} }
