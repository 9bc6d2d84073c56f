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

// registerRead registers the "read one" route of a resource of the
// caller's workspace (a task, a media): GET path, the use case's get,
// and how the domain value is shown. A task type's read route is one call.
func registerRead[D, T any](api huma.API, operationID, path, summary, tag string,
	get func(context.Context, model.Principal, uuid.UUID) (D, error), show func(D) T,
) {
	huma.Register(api, huma.Operation{
		OperationID: operationID,
		Method:      http.MethodGet,
		Path:        path,
		Summary:     summary,
		Tags:        []string{tag},
		Security:    bearer,
		Errors:      []int{401, 403, 404, 422, 500, 503},
	}, func(ctx context.Context, in *IDInput) (*ReadOutput[T], error) {
		p, err := principalFrom(ctx)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		d, err := get(ctx, p, in.ID)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		return &ReadOutput[T]{Body: show(d)}, nil
	})
}
