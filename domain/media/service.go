// Package media holds the use cases of uploaded files: register an upload,
// receive its content, complete it (which starts validation and derivation
// as an idempotent, evented write), and the worker that validates the
// content and derives the variants.
package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a media's processing as the steps every job shares see it: a job
// given up leaves the media rejected with the reason, a re-drive puts it
// back to processing.
var Task = jobs.StatusTable(kinds.MediaProcess, ports.Tx.Media,
	func(m *model.Media) (*model.MediaStatus, *string, *time.Time) {
		return &m.Status, &m.Reason, &m.UpdatedAt
	},
	model.MediaProcessing, model.MediaRejected)

// Kind is the media processing (names and failure hook), listed with
// its use case and worker handler in app/kind_list.go.
var Kind = Task.Kind()

// Service registers, receives, completes and reads media.
type Service struct {
	jobs.Starter
	store ports.ObjectStore
	// signer is the store when it can pre-sign (direct uploads and
	// downloads), nil otherwise.
	signer ports.ObjectPresigner
	// URLTTL is the life of the URLs signer signs.
	URLTTL time.Duration
}

// DefaultURLTTL is the life of a pre-signed URL unless configured.
const DefaultURLTTL = 15 * time.Minute

// NewService builds the service.
func NewService(uow ports.UnitOfWork, store ports.ObjectStore, clock ports.Clock, ids ports.IDGenerator) *Service {
	signer, _ := store.(ports.ObjectPresigner)
	return &Service{Starter: jobs.Starter{UOW: uow, Clock: clock, IDs: ids}, store: store, signer: signer, URLTTL: DefaultURLTTL}
}

// DirectUploads says whether clients upload straight to the object store
// (with the URL of UploadURL) rather than through the API.
func (s *Service) DirectUploads() bool { return s.signer != nil }

// UploadURL signs a direct upload of m's registered content, for the
// client that registered it. The URL is a credential: it goes into that
// response only, never into storage, logs or errors. ok is false when the
// store cannot sign or m no longer awaits its upload (the upload goes
// through the API, or not at all).
//
// Errors: the store's (domain.CodeUnavailable when its credentials cannot
// be had).
func (s *Service) UploadURL(ctx context.Context, m model.Media) (ports.SignedRequest, bool, error) {
	if s.signer == nil || m.Status != model.MediaAwaitingUpload || m.SHA256 == "" {
		return ports.SignedRequest{}, false, nil
	}
	req, err := s.signer.PresignPut(ctx, m.ObjectKey, ports.ObjectInfo{Size: m.SizeBytes, ContentType: m.ContentType, SHA256: m.SHA256}, s.URLTTL)
	return req, err == nil, err
}

// DownloadURLs signs downloads of m's original and variants, by name
// ("original", then the variants'), for the client that reads m. Like
// UploadURL's, they are handed out and never kept. ok is false when the
// store cannot sign; media not yet processed have no downloads.
//
// Errors: the store's.
func (s *Service) DownloadURLs(ctx context.Context, m model.Media) (map[string]ports.SignedRequest, bool, error) {
	if s.signer == nil {
		return nil, false, nil
	}
	if m.Status != model.MediaReady {
		return nil, true, nil
	}
	urls := make(map[string]ports.SignedRequest, len(m.Variants)+1)
	keys := map[string]string{"original": m.ObjectKey}
	for _, v := range m.Variants {
		keys[v.Name] = v.ObjectKey
	}
	for name, key := range keys {
		req, err := s.signer.PresignGet(ctx, key, s.URLTTL)
		if err != nil {
			return nil, false, err
		}
		urls[name] = req
	}
	return urls, true, nil
}

// Register records, in the caller's transaction (the endpoint is
// idempotent), an upload the client is about to make, awaiting its content
// under ObjectKey.
//
// Errors: domain.CodeValidation for a bad registration (a file name of
// 1-255 characters, content type image/png or image/jpeg, size 1 byte to
// 20 MiB); the repository's errors.
func (s *Service) Register(ctx context.Context, tx ports.Tx, p model.Principal, r Registration) (model.Media, error) {
	r = r.normalize()
	if err := r.validate(); err != nil {
		return model.Media{}, err
	}
	if s.signer != nil && r.SHA256 == "" {
		// The store checks a direct upload against the signed digest.
		return model.Media{}, domain.Errorf(domain.CodeValidation, "sha256 is required: the content is uploaded straight to the object store, which checks it")
	}
	now := s.Clock.Now()
	id := s.IDs.NewID()
	m := model.Media{
		ID:          id,
		WorkspaceID: p.WorkspaceID,
		Filename:    r.Filename,
		ContentType: r.ContentType,
		SizeBytes:   r.SizeBytes,
		SHA256:      r.SHA256,
		ObjectKey:   ObjectKey(p.WorkspaceID, id),
		Status:      model.MediaAwaitingUpload,
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	if err := tx.Media().Create(ctx, m); err != nil {
		return model.Media{}, err
	}
	return m, nil
}

// Upload stores the content of registered media, replacing an earlier
// upload (a client may retry with other bytes until it completes). The
// content must be exactly the registered size and type; whether it really
// is an image is the worker's check.
//
// Errors: domain.CodeNotFound if there is no such media,
// domain.CodeInvalidState once it is no longer awaiting its upload,
// domain.CodeValidation if the size or content type is not the registered
// one, domain.CodeUnavailable (or the store's other errors) when the
// content cannot be stored.
func (s *Service) Upload(ctx context.Context, p model.Principal, id uuid.UUID, contentType string, data []byte) (model.Media, error) {
	m, err := s.Get(ctx, p, id)
	if err != nil {
		return model.Media{}, err
	}
	if m.Status != model.MediaAwaitingUpload {
		return model.Media{}, domain.Errorf(domain.CodeInvalidState, "media is %s: its content can no longer be uploaded", m.Status)
	}
	if int64(len(data)) != m.SizeBytes {
		return model.Media{}, domain.Errorf(domain.CodeValidation, "the content is %d bytes, %d were registered", len(data), m.SizeBytes)
	}
	if normalizeContentType(contentType) != m.ContentType {
		return model.Media{}, domain.Errorf(domain.CodeValidation, "the content type is not the registered %s", m.ContentType)
	}
	if m.SHA256 != "" {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != m.SHA256 {
			return model.Media{}, domain.Errorf(domain.CodeValidation, "the content's SHA-256 is not the registered one")
		}
	}
	// Stored outside any transaction: nothing is held open during the
	// transfer. Complete checks that the object exists.
	if err := s.store.Put(ctx, m.ObjectKey, data, m.ContentType); err != nil {
		return model.Media{}, err
	}
	return m, nil
}

// Get reads one media of the caller's workspace.
//
// Errors: domain.CodeNotFound if there is none (media of other workspaces
// included).
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.Media, error) {
	return Task.Read(ctx, s.UOW, p, id)
}
