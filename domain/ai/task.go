package ai

import (
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is an AI task as the steps every job shares see it.
var Task = jobs.TaskTable[domain.AITask](domain.OperationAITask, "ai_task", domain.EventAITask, ports.Tx.AITasks)
