package httpapi

import (
	"context"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/domain/model"
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
	TaskHead
	ProductID uuid.UUID `json:"product_id" format:"uuid"`
	Kind      string    `json:"kind" enum:"text,category,image"`
	Result    string    `json:"result,omitempty" doc:"The text or category; for images, the id of the generated media"`
	TaskTimes
}

func toAITask(t model.AITask) AITask {
	return AITask{TaskHead: taskHead(t.TaskState), ProductID: t.ProductID, Kind: string(t.Kind), Result: t.Result,
		TaskTimes: taskTimes(t.TaskState)}
}

// AITaskAccepted is the answer to the request that starts one (202 Accepted).
type AITaskAccepted struct {
	Task AITask `json:"task"`
	OperationAccepted
}

type ListAITasksInput struct {
	ListTasksInput
	ProductID uuid.UUID `query:"product_id" format:"uuid" doc:"Only tasks on this product"`
	Kind      string    `query:"kind" enum:"text,category,image" doc:"Only tasks of this kind"`
}

var _ = registerKindRoutes((*handlers).registerAITasks)

func (h *handlers) registerAITasks(api huma.API) {
	tasks := taskService[*ai.Service](h)
	registerTask(h, api, ai.Kind, needs(model.ScopeAIWrite, post("startAITask", "/v1/ai-tasks", "ai", "Start an AI task (text, category or image)",
		"One provider call and one billing record per task, whatever the retries and deliveries. Idempotent.",
		400, 401, 403, 404, 409, 413, 422, 500, 503)), taskAt("/v1/ai-tasks/"),
		func(ctx context.Context, tx ports.Tx, p model.Principal, in *StartAITaskInput) (AITaskAccepted, model.Operation, error) {
			t, op, err := tasks.Start(ctx, tx, p, ai.StartCommand{
				ProductID: in.Body.ProductID, Kind: model.AIKind(in.Body.Kind), Instructions: in.Body.Instructions,
			})
			return AITaskAccepted{Task: toAITask(t), OperationAccepted: accepted(op)}, op, err
		})
	registerRead(api, model.ScopeAIRead, "getAITask", "/v1/ai-tasks/{id}", "Read an AI task", "ai", tasks.Get, toAITask)
	registerList[ListAITasksInput](api, h, model.ScopeAIRead, "listAITasks", "/v1/ai-tasks", "List AI tasks", "ai", "The workspace's AI tasks.", ports.Repository[ports.AITaskRepository], toAITask)
}
