package postgres

import (
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// The columns every task table has alike; each kind's row model, in its
// table's file, embeds them.

// taskState are the columns of a model.TaskState, which every task table
// (transfers, publications, syncs, AI tasks) has alike.
type taskState struct {
	rowKeys
	OperationID uuid.UUID `bun:"operation_id,type:uuid"`
	Status      string    `bun:"status,notnull"`
	taskTimes
}

func toTaskState(s model.TaskState) taskState {
	return taskState{
		rowKeys: rowKeys{s.ID, s.WorkspaceID}, OperationID: s.OperationID, Status: string(s.Status),
		taskTimes: toTaskTimes(s.Reason, s.CreatedAt, s.UpdatedAt),
	}
}

func (r taskState) state() model.TaskState {
	return model.TaskState{
		ID: r.ID, WorkspaceID: r.WorkspaceID, OperationID: r.OperationID, Status: model.TaskStatus(r.Status),
		Reason: strVal(r.Reason), CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}
}

// taskTimes are the columns every task table has alike, media included:
// why the task failed, if it did, and when it was created and last
// changed.
type taskTimes struct {
	Reason *string `bun:"reason"`
	rowTimes
}

func toTaskTimes(reason string, created, updated time.Time) taskTimes {
	return taskTimes{Reason: strPtr(reason), rowTimes: toRowTimes(created, updated)}
}
