package model

import (
	"time"

	"github.com/google/uuid"
)

// TaskStatus is the state of a domain task (transfer, publication, sync, AI
// task). Task tables are the truth users see; workers move them forward.
type TaskStatus string

const (
	TaskPending   TaskStatus = "pending"
	TaskRunning   TaskStatus = "running"
	TaskSucceeded TaskStatus = "succeeded"
	TaskFailed    TaskStatus = "failed"
)

// Finished reports whether the task reached a final state.
func (s TaskStatus) Finished() bool { return s == TaskSucceeded || s == TaskFailed }

// Active reports whether the task still has work to do.
func (s TaskStatus) Active() bool { return s == TaskPending || s == TaskRunning }

// TaskState is what every task row holds alike (a transfer, a publication,
// a sync, an AI task): its id and workspace, the operation that tracks it,
// where it stands, why it failed if it did, and when it was created and
// last changed. The task entities embed it, so the steps every job shares
// (domain/jobs) reach it through State and each adapter maps it once.
type TaskState struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	OperationID uuid.UUID
	Status      TaskStatus
	Reason      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewTaskState is the state of a task about to be written: pending, created
// and changed at now. Its OperationID is set when its job is built.
func NewTaskState(id, workspace uuid.UUID, now time.Time) TaskState {
	return TaskState{ID: id, WorkspaceID: workspace, Status: TaskPending, CreatedAt: now, UpdatedAt: now}
}

// State is the task's state, for the steps every job shares to read and
// move forward.
func (s *TaskState) State() *TaskState { return s }
