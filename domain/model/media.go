package model

import (
	"time"

	"github.com/google/uuid"
)

// The jobs of a media's processing: the event type that asks a worker for one
// (it names the job) and the kind of the operation that tracks it (what
// users see).
const (
	EventMediaProcess     = "media.process"
	OperationMediaProcess = "media.process"
)

// MediaStatus is where an uploaded file stands.
type MediaStatus string

const (
	// MediaAwaitingUpload: registered; the client uploads the bytes next.
	MediaAwaitingUpload MediaStatus = "awaiting_upload"
	// MediaProcessing: the client said the upload is complete; the worker
	// validates the object and derives its variants.
	MediaProcessing MediaStatus = "processing"
	MediaReady      MediaStatus = "ready"
	MediaRejected   MediaStatus = "rejected"
)

// Media is a file a workspace uploaded (product images). ObjectKey and the
// variants' keys are internal: they never leave the service (not in
// responses, not in events).
type Media struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Filename    string
	ContentType string
	// SizeBytes is what the client declared at registration; the worker
	// checks the stored object against it.
	SizeBytes int64
	// SHA256 is the hex digest the client declared at registration, if
	// any: a direct upload is signed for it and completing checks it.
	SHA256    string
	ObjectKey string
	Status    MediaStatus
	// Variants are the derived files, by name ("thumbnail", "medium").
	Variants  []MediaVariant
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MediaVariant is one derived file.
type MediaVariant struct {
	Name      string
	ObjectKey string
	SizeBytes int64
}

// MediaVariantNames are the variants derived from every image.
var MediaVariantNames = []string{"thumbnail", "medium"}

// MediaProcess is the payload of EventMediaProcess.
type MediaProcess struct {
	MediaID uuid.UUID `json:"media_id"`
	JobOperation
}

// Task is the media the job works on (domain/jobs).
func (j MediaProcess) Task() uuid.UUID { return j.MediaID }
