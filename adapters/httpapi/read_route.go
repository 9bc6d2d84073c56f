package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// IDInput names the resource a read route returns.
type IDInput struct {
	ID uuid.UUID `path:"id" format:"uuid"`
}

// ReadOutput is the body of a read route.
type ReadOutput[T any] struct {
	Body T
}

// get describes a GET operation of the caller's workspace: its id, path,
// tag, summary, description and error statuses (post's sibling).
func get(operationID, path, tag, summary, description string, errors ...int) huma.Operation {
	return huma.Operation{
		OperationID: operationID, Method: http.MethodGet, Path: path, Tags: []string{tag},
		Summary: summary, Description: description, Errors: errors, Security: bearer,
	}
}

// registerRead registers the "read one" route of a resource of the
// caller's workspace (a task, a media): GET path, the scope it needs, the use case's read,
// and how the domain value is shown. A task type's read route is one call.
func registerRead[D, T any](api huma.API, scope model.Scope, operationID, path, summary, tag string,
	read func(context.Context, model.Principal, uuid.UUID) (D, error), show func(D) T,
) {
	huma.Register(api, needs(scope, get(operationID, path, tag, summary, "", 401, 403, 404, 422, 500, 503)), func(ctx context.Context, in *IDInput) (*ReadOutput[T], error) {
		p, err := principalFrom(ctx)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		d, err := read(ctx, p, in.ID)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		return &ReadOutput[T]{Body: show(d)}, nil
	})
}
