package ai

import (
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is an AI task as the steps every job shares see it.
var Task = jobs.TaskTable[model.AITask](model.OperationAITask, "ai_task", model.EventAITask, ports.Tx.AITasks)
