package ai

import (
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is an AI task as the steps every job shares see it.
var Task = jobs.TaskTable[model.AITask](jobs.Names{
	EventType: model.EventAITask, OperationKind: model.OperationAITask, ResourceType: "ai_task",
}, ports.Tx.AITasks)

// Kind is the AI task in the list of task kinds (app/kinds.go).
var Kind = Task.Kind()
