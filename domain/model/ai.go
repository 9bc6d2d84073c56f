package model

import (
	"time"

	"github.com/google/uuid"
)

// The jobs of AI tasks: the event type that asks a worker for one
// (it names the job) and the kind of the operation that tracks it (what
// users see).
const (
	EventAITask     = "ai.task"
	OperationAITask = "ai.task"
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
	TaskState
	ProductID uuid.UUID
	Kind      AIKind
	// Instructions is the user's prompt addition (free text, bounded).
	Instructions string
	// Result is the text or category; for images, the media id of the
	// generated image.
	Result string
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
	TaskID uuid.UUID `json:"task_id"`
	JobOperation
}

// Task is the AI task the job works on (domain/jobs).
func (j AITaskRun) Task() uuid.UUID { return j.TaskID }
