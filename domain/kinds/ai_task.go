package kinds

import "github.com/oncehq/once/domain/model"

// AITask asks a model for a product's text or category.
var AITask = Kind{EventType: model.EventAITask, OperationKind: model.OperationAITask, ResourceType: "ai_task", Table: "ai_tasks", Retention: ExpiresFinished}
