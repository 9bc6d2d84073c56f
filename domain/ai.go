package domain

import (
	"time"

	"github.com/google/uuid"
)

// AIKind is what an AI task produces.
type AIKind string

const (
	AIText     AIKind = "text"
	AICategory AIKind = "category"
	AIImage    AIKind = "image"
)

// Valid reports whether k is a known kind.
func (k AIKind) Valid() bool { return k == AIText || k == AICategory || k == AIImage }

// AITask is one call to an AI provider for a product: a description, a
// category suggestion or an image. One provider call and one billing record
// per task, whatever the deliveries: the task id is the provider's request
// token and the billing record is unique per task.
type AITask struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	ProductID   uuid.UUID
	OperationID uuid.UUID
	Kind        AIKind
	// Instructions is the user's prompt addition (free text, bounded).
	Instructions string
	Status       TaskStatus
	// Result is the text or category; for images, the media id of the
	// generated image.
	Result    string
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// BillingRecord is what one AI task costs the workspace. Unique per task.
type BillingRecord struct {
	WorkspaceID uuid.UUID
	TaskID      uuid.UUID
	Units       int64
	CreatedAt   time.Time
}

// AITaskRun is the payload of EventAITask.
type AITaskRun struct {
	TaskID      uuid.UUID `json:"task_id"`
	OperationID uuid.UUID `json:"operation_id"`
}

// JobIDs names the operation and the task of the job (domain/jobs).
func (j AITaskRun) JobIDs() (operationID, taskID uuid.UUID) { return j.OperationID, j.TaskID }

// TaskFields says where the AITask keeps its task state (domain/jobs).
func (t *AITask) TaskFields() (*TaskStatus, *string, *time.Time, uuid.UUID) {
	return &t.Status, &t.Reason, &t.UpdatedAt, t.OperationID
}
