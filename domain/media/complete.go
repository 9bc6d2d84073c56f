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
// content was uploaded, domain.CodeUnavailable (or the store's other
// errors) when the object store cannot be asked; the repositories' errors.
func (s *Service) Complete(ctx context.Context, tx ports.Tx, p model.Principal, id uuid.UUID) (model.Media, model.Operation, error) {
	m, err := tx.Media().Get(ctx, id)
	if err != nil {
		return model.Media{}, model.Operation{}, err
	}
	if m.Status != model.MediaAwaitingUpload {
		return model.Media{}, model.Operation{}, domain.Errorf(domain.CodeInvalidState, "media is %s, not awaiting its upload", m.Status)
	}
	if _, err := s.store.Stat(ctx, m.ObjectKey); err != nil {
		if domain.IsCode(err, domain.CodeNotFound) {
			return model.Media{}, model.Operation{}, domain.Errorf(domain.CodeInvalidState, "no content was uploaded: upload the content first")
		}
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
