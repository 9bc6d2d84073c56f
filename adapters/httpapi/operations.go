package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// Operation is asynchronous work as clients see it.
type Operation struct {
	ID           uuid.UUID `json:"id" format:"uuid"`
	Kind         string    `json:"kind" example:"store.verify"`
	Status       string    `json:"status" enum:"pending,running,succeeded,failed"`
	ResourceType string    `json:"resource_type" example:"store"`
	ResourceID   uuid.UUID `json:"resource_id" format:"uuid"`
	Error        string    `json:"error,omitempty" doc:"Why the operation failed; sanitized"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

type GetOperationInput struct {
	ID uuid.UUID `path:"id" format:"uuid" doc:"The operation id"`
}

type OperationOutput struct {
	Body Operation
}

func toOperation(op domain.Operation) Operation {
	return Operation{
		ID: op.ID, Kind: op.Kind, Status: string(op.Status), ResourceType: op.ResourceType,
		ResourceID: op.ResourceID, Error: op.Error, CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt,
	}
}

func (h *handlers) registerOperations(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "getOperation",
		Method:      http.MethodGet,
		Path:        "/v1/operations/{id}",
		Summary:     "Read an operation",
		Description: "Poll this to follow asynchronous work from pending to running to succeeded or failed.",
		Tags:        []string{"operations"},
		Security:    bearer,
		Errors:      []int{401, 403, 404, 500, 503},
	}, h.getOperation)
}

func (h *handlers) getOperation(ctx context.Context, in *GetOperationInput) (*OperationOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	op, err := h.deps.Operations.Get(ctx, p, in.ID)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &OperationOutput{Body: toOperation(op)}, nil
}
