package domain

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

// MaterialTransfer copies collected material (supplier images found by the
// collector) into our own object store. It is accepted at once; the worker
// copies item by item and records each, so after a crash it resumes at the
// first item not yet copied, and never stores an item twice.
type MaterialTransfer struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	OperationID uuid.UUID
	Status      TaskStatus
	Items       []MaterialItem
	Reason      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// MaterialItem is one file to copy. SourceURL is where the collector found
// it; it stays in the database, never in an event payload (it may carry a
// signature).
type MaterialItem struct {
	Index     int
	SourceURL string
	// ObjectKey is set once the item is stored (deterministic per transfer
	// and index, so a retry writes the same object).
	ObjectKey string
	SizeBytes int64
	Done      bool
}

// MaterialTransferRun is the payload of EventMaterialTransfer.
type MaterialTransferRun struct {
	TransferID  uuid.UUID `json:"transfer_id"`
	OperationID uuid.UUID `json:"operation_id"`
}

// JobIDs names the operation and the task of the job (domain/jobs).
func (j MaterialTransferRun) JobIDs() (operationID, taskID uuid.UUID) {
	return j.OperationID, j.TransferID
}

// TaskFields says where the MaterialTransfer keeps its task state (domain/jobs).
func (t *MaterialTransfer) TaskFields() (*TaskStatus, *string, *time.Time, uuid.UUID) {
	return &t.Status, &t.Reason, &t.UpdatedAt, t.OperationID
}
