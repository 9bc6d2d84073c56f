package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/ports"
)

type StartAITaskRequest struct {
	ProductID    uuid.UUID `json:"product_id" format:"uuid" doc:"The product the task works on"`
	Kind         string    `json:"kind" enum:"text,category,image" doc:"text: a description; category: a category suggestion; image: a product image"`
	Instructions string    `json:"instructions,omitempty" maxLength:"2000" doc:"Extra instructions for the model"`
}

type StartAITaskInput struct {
	IdempotencyKeyHeader
	RawBody []byte
	Body    StartAITaskRequest
}

type AITask struct {
	ID          uuid.UUID `json:"id" format:"uuid"`
	ProductID   uuid.UUID `json:"product_id" format:"uuid"`
	OperationID uuid.UUID `json:"operation_id" format:"uuid"`
	Kind        string    `json:"kind" enum:"text,category,image"`
	Status      string    `json:"status" enum:"pending,running,succeeded,failed"`
	Result      string    `json:"result,omitempty" doc:"The text or category; for images, the id of the generated media"`
	Reason      string    `json:"reason,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type AITaskAccepted struct {
	Task      AITask    `json:"task"`
	Operation Operation `json:"operation"`
}

func toAITask(t domain.AITask) AITask {
	return AITask{ID: t.ID, ProductID: t.ProductID, OperationID: t.OperationID, Kind: string(t.Kind),
		Status: string(t.Status), Result: t.Result, Reason: t.Reason, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

func (h *handlers) registerAITasks(api huma.API) {
	registerIdempotent(api, huma.Operation{
		OperationID:   "startAITask",
		Method:        http.MethodPost,
		Path:          "/v1/ai-tasks",
		Summary:       "Start an AI task (text, category or image)",
		Description:   "One provider call and one billing record per task, whatever the retries and deliveries. Idempotent.",
		Tags:          []string{"ai"},
		DefaultStatus: http.StatusAccepted,
		Security:      bearer,
		Errors:        []int{400, 401, 403, 404, 409, 413, 422, 500, 503},
	}, h.deps.MaxBodyBytes, h.startAITask)
	registerRead(api, "getAITask", "/v1/ai-tasks/{id}", "Read an AI task", "ai", h.deps.AI.Get, toAITask)
}

func (h *handlers) startAITask(ctx context.Context, in *StartAITaskInput) (*IdempotentOutput[AITaskAccepted], error) {
	return runIdempotent(ctx, h.deps.Idempotency, in.RawBody,
		func(ctx context.Context, tx ports.Tx, p domain.Principal) (int, string, AITaskAccepted, error) {
			t, op, err := h.deps.AI.Start(ctx, tx, p, ai.StartCommand{
				ProductID: in.Body.ProductID, Kind: domain.AIKind(in.Body.Kind), Instructions: in.Body.Instructions,
			})
			if err != nil {
				return 0, "", AITaskAccepted{}, err
			}
			return http.StatusAccepted, "/v1/ai-tasks/" + t.ID.String(),
				AITaskAccepted{Task: toAITask(t), Operation: toOperation(op)}, nil
		})
}
