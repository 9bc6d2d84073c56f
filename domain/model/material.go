package model

import "github.com/google/uuid"

// The jobs of material transfers: the event type that asks a worker for one
// (it names the job) and the kind of the operation that tracks it (what
// users see).
const (
	EventMaterialTransfer     = "material.transfer"
	OperationMaterialTransfer = "material.transfer"
)

// MaterialTransfer copies collected material (supplier images found by the
// collector) into our own object store. It is accepted at once; the worker
// copies item by item and records each, so after a crash it resumes at the
// first item not yet copied, and never stores an item twice.
type MaterialTransfer struct {
	TaskState
	Items []MaterialItem
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
	TransferID uuid.UUID `json:"transfer_id"`
	JobOperation
}

// Task is the transfer the job works on (domain/jobs).
func (j MaterialTransferRun) Task() uuid.UUID { return j.TransferID }
