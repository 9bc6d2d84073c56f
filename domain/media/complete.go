package media

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Complete says the upload of media id is finished: in tx, the media
// becomes processing, an operation of kind model.OperationMediaProcess
// tracks the validation and derivation, and the model.EventMediaProcess
// event (ids only, never the object key) asks the worker for it. It runs
// inside the caller's transaction so the idempotency record commits with
// it; a replayed request gets the saved answer, and a new request for media
// already completed is refused. Of concurrent new requests for one media
// exactly one succeeds: the media moves by compare-and-set
// (ports.MediaRepository.Transition), so the others write nothing.
//
// Errors: domain.CodeNotFound if there is no such media,
// domain.CodeInvalidState if it is not awaiting its upload (completed
// already, by this or a concurrent request, ready or rejected) or if no
// content was uploaded, domain.CodeUploadMismatch if the stored object is
// not the registered size, content type or SHA-256 (no job starts), domain.CodeUnavailable (or the store's other
// errors) when the object store cannot be asked; the repositories' errors.
func (s *Service) Complete(ctx context.Context, tx ports.Tx, p model.Principal, id uuid.UUID) (model.Media, model.Operation, error) {
	m, err := tx.Media().Get(ctx, id)
	if err != nil {
		return model.Media{}, model.Operation{}, err
	}
	if m.Status != model.MediaAwaitingUpload {
		return model.Media{}, model.Operation{}, domain.Errorf(domain.CodeInvalidState, "media is %s, not awaiting its upload", m.Status)
	}
	info, err := s.store.Stat(ctx, m.ObjectKey)
	if err != nil {
		if domain.IsCode(err, domain.CodeNotFound) {
			return model.Media{}, model.Operation{}, domain.Errorf(domain.CodeInvalidState, "no content was uploaded: upload the content first")
		}
		return model.Media{}, model.Operation{}, err
	}
	if err := matchesRegistration(m, info); err != nil {
		return model.Media{}, model.Operation{}, err
	}

	now := s.Clock.Now()
	m.Status = model.MediaProcessing
	m.UpdatedAt = now
	// Processed in our own object store: no destination outside, no order.
	op, event, err := model.NewJob(ctx, s.IDs, p, now, Task.Spec(m.ID, jobs.Route{}, func(op model.JobOperation) any {
		return model.MediaProcess{MediaID: m.ID, JobOperation: op}
	}))
	if err != nil {
		return model.Media{}, model.Operation{}, err
	}

	// Get took no lock: a concurrent Complete (another idempotency key) may
	// have read awaiting_upload too. The compare-and-set lets one of them
	// through; the other gets CodeInvalidState before writing anything.
	if err := tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, now); err != nil {
		return model.Media{}, model.Operation{}, err
	}
	if err := tx.Operations().Create(ctx, op); err != nil {
		return model.Media{}, model.Operation{}, err
	}
	if err := tx.Outbox().Append(ctx, event); err != nil {
		return model.Media{}, model.Operation{}, err
	}
	return m, op, nil
}

// matchesRegistration checks the stored object against what was
// registered: a direct upload reached the store without passing our
// checks, so completing is where a wrong size, type or digest is refused,
// before any job starts.
//
// Errors: domain.CodeUploadMismatch.
func matchesRegistration(m model.Media, info ports.ObjectInfo) error {
	switch {
	case info.Size != m.SizeBytes:
		return domain.Errorf(domain.CodeUploadMismatch, "the uploaded content is %d bytes, %d were registered", info.Size, m.SizeBytes)
	case normalizeContentType(info.ContentType) != m.ContentType:
		return domain.Errorf(domain.CodeUploadMismatch, "the uploaded content type is not the registered %s", m.ContentType)
	case m.SHA256 != "" && info.SHA256 == "":
		// Not a signed upload's object: its digest cannot be checked.
		return domain.Errorf(domain.CodeUploadMismatch, "the uploaded content has no SHA-256 checksum; upload it with the signed request")
	case m.SHA256 != "" && info.SHA256 != m.SHA256:
		return domain.Errorf(domain.CodeUploadMismatch, "the uploaded content's SHA-256 is not the registered one")
	}
	return nil
}
