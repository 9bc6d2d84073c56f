package media

import (
	"context"
	"errors"
	"image"
	"log/slog"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on an operation that ended without the media being
// processed by it.
const (
	ReasonMediaNotFound = "the media no longer exists"
	reasonNotCompleted  = "the media upload was not completed"
)

// ProcessHandler validates the content of completed media and derives its
// variants, for one media.process message. It is re-entrant: the
// operation's state says whether the work is done, and every variant is
// written with PutIfAbsent under a key that depends only on the media and
// the variant, so a redelivered message never makes a second object, even
// when the first delivery died after writing the variants and before
// recording them.
//
// The steps, each transaction short so nothing is held open during I/O:
//
//  1. read the operation and the media; an operation already succeeded or
//     failed means a duplicate delivery: done. Otherwise the operation
//     becomes running.
//  2. read the original from the object store and check it: the registered
//     size and content type, and bytes that really decode as that format
//     (PNG or JPEG), within MaxPixels.
//  3. derive every variant of domain.MediaVariantNames by scaling the image
//     to fit its box, encoded in the original's format, and write each with
//     PutIfAbsent (an existing object from an earlier attempt is kept).
//  4. in one transaction: the variants recorded, media ready, operation
//     succeeded. Content that fails step 2 or 3 ends instead with the media
//     rejected and the operation failed, both with a reason safe to show.
//
// Errors: a storage failure (CodeUnavailable or the store's other codes)
// or a cancelled context is returned as it is, so the message is delivered
// again; the operation stays running. A message that can never succeed (not
// this event type, a payload that does not decode, an operation that does
// not exist or is not the processing of the message's media) is
// CodeValidation or CodeNotFound, which the worker gives up on at once.
// Rejected content is a result, not an error: it is recorded and nil is
// returned.
type ProcessHandler struct {
	uow   ports.UnitOfWork
	store ports.ObjectStore
	clock ports.Clock
	log   *slog.Logger
}

var _ ports.MessageHandler = (*ProcessHandler)(nil)

// NewProcessHandler builds the handler; log may be nil.
func NewProcessHandler(uow ports.UnitOfWork, store ports.ObjectStore, clock ports.Clock, log *slog.Logger) *ProcessHandler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ProcessHandler{uow: uow, store: store, clock: clock, log: log.With("handler", domain.EventMediaProcess)}
}

// Handle processes one delivery; see ProcessHandler.
func (h *ProcessHandler) Handle(ctx context.Context, msg ports.Message) error {
	job, err := decodeMessage(msg)
	if err != nil {
		return err
	}
	ws := msg.WorkspaceID
	log := h.log.With("message", msg.ID, "workspace", ws, "operation", job.OperationID, "media", job.MediaID)

	m, proceed, err := h.start(ctx, ws, job, log)
	if err != nil || !proceed {
		return err
	}

	data, _, err := h.store.Get(ctx, m.ObjectKey)
	if domain.IsCode(err, domain.CodeNotFound) {
		return h.reject(ctx, ws, job, reject(ReasonContentMissing), log)
	}
	if err != nil {
		log.Warn("original cannot be read, processing will be retried", "error", domain.SanitizeError(err))
		return err
	}
	img, err := decode(m, data)
	if err != nil {
		return h.reject(ctx, ws, job, err, log)
	}
	format := ContentTypes[m.ContentType]
	variants := make([]domain.MediaVariant, 0, len(domain.MediaVariantNames))
	for _, name := range domain.MediaVariantNames {
		v, err := h.writeVariant(ctx, m, img, name, format)
		if err != nil {
			var r *rejection
			if errors.As(err, &r) {
				return h.reject(ctx, ws, job, r, log)
			}
			log.Warn("variant cannot be stored, processing will be retried", "variant", name, "error", domain.SanitizeError(err))
			return err
		}
		variants = append(variants, v)
	}
	return h.succeed(ctx, ws, job, variants, log)
}

// decodeMessage reads and checks the payload.
func decodeMessage(msg ports.Message) (domain.MediaProcess, error) {
	return jobs.Decode(msg, domain.EventMediaProcess, func(j domain.MediaProcess) bool {
		return j.MediaID != uuid.Nil && j.OperationID != uuid.Nil
	})
}

// start is step 1. proceed is false when there is nothing (more) to do.
func (h *ProcessHandler) start(ctx context.Context, ws uuid.UUID, job domain.MediaProcess, log *slog.Logger) (m domain.Media, proceed bool, err error) {
	err = jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		proceed = false
		op, current, done, err := h.load(ctx, tx, job, log)
		if err != nil || done {
			return err
		}
		m, proceed = current, true
		if op.Status == domain.OperationRunning {
			return nil // a redelivery after a failed attempt
		}
		op.Start(h.clock.Now())
		return tx.Operations().Update(ctx, op)
	})
	if err != nil {
		return domain.Media{}, false, err
	}
	return m, proceed, nil
}

// succeed is step 4 for valid content.
func (h *ProcessHandler) succeed(ctx context.Context, ws uuid.UUID, job domain.MediaProcess, variants []domain.MediaVariant, log *slog.Logger) error {
	return jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		op, m, done, err := h.load(ctx, tx, job, log)
		if err != nil || done {
			return err
		}
		now := h.clock.Now()
		m.Status, m.Variants, m.Reason, m.UpdatedAt = domain.MediaReady, variants, "", now
		if err := tx.Media().Update(ctx, m); err != nil {
			return err
		}
		op.Succeed(now)
		log.Info("media ready", "variants", len(variants))
		return tx.Operations().Update(ctx, op)
	})
}

// reject is step 4 for content that failed validation or derivation.
func (h *ProcessHandler) reject(ctx context.Context, ws uuid.UUID, job domain.MediaProcess, verdict error, log *slog.Logger) error {
	reason := ReasonNotAnImage
	var r *rejection
	if errors.As(verdict, &r) && r.reason != "" {
		reason = r.reason
	}
	return jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		op, m, done, err := h.load(ctx, tx, job, log)
		if err != nil || done {
			return err
		}
		now := h.clock.Now()
		m.Status, m.Reason, m.UpdatedAt = domain.MediaRejected, reason, now
		if err := tx.Media().Update(ctx, m); err != nil {
			return err
		}
		log.Info("media rejected", "reason", reason)
		return h.fail(ctx, tx, op, reason)
	})
}

// load reads the job's operation and media in tx. done is true when the
// operation needs nothing more: it was finished already (a duplicate or
// concurrent delivery), or the media's state settled it here (gone, or
// ready or rejected by another operation), in which case load records the
// outcome on the operation. Otherwise the media is processing and op is
// unfinished.
func (h *ProcessHandler) load(ctx context.Context, tx ports.Tx, job domain.MediaProcess, log *slog.Logger) (op domain.Operation, m domain.Media, done bool, err error) {
	op, err = jobs.Operation(ctx, tx, job.OperationID, domain.OperationMediaProcess, job.MediaID)
	if err != nil {
		return op, m, false, err
	}
	if op.Finished() {
		log.Info("operation already finished: duplicate delivery", "status", op.Status)
		return op, m, true, nil
	}
	m, err = tx.Media().Get(ctx, job.MediaID)
	if domain.IsCode(err, domain.CodeNotFound) {
		log.Warn("media not found, operation failed")
		return op, m, true, h.fail(ctx, tx, op, ReasonMediaNotFound)
	}
	if err != nil {
		return op, m, false, err
	}
	switch m.Status {
	case domain.MediaProcessing:
		return op, m, false, nil
	case domain.MediaReady:
		log.Info("media already ready: processed by another operation")
		op.Succeed(h.clock.Now())
		return op, m, true, tx.Operations().Update(ctx, op)
	case domain.MediaRejected:
		log.Info("media already rejected by another operation")
		return op, m, true, h.fail(ctx, tx, op, m.Reason)
	default:
		log.Warn("media is not completed, operation failed", "media_status", m.Status)
		return op, m, true, h.fail(ctx, tx, op, reasonNotCompleted)
	}
}

// writeVariant derives one variant and writes it once. If an earlier
// attempt already stored it, that object is kept and described.
func (h *ProcessHandler) writeVariant(ctx context.Context, m domain.Media, img image.Image, name, format string) (domain.MediaVariant, error) {
	data, err := derive(img, name, format)
	if err != nil {
		return domain.MediaVariant{}, err
	}
	key := VariantKey(m.WorkspaceID, m.ID, name)
	created, err := h.store.PutIfAbsent(ctx, key, data, m.ContentType)
	if err != nil {
		return domain.MediaVariant{}, err
	}
	size := int64(len(data))
	if !created {
		info, err := h.store.Stat(ctx, key)
		if err != nil {
			return domain.MediaVariant{}, err
		}
		size = info.Size
	}
	return domain.MediaVariant{Name: name, ObjectKey: key, SizeBytes: size}, nil
}

func (h *ProcessHandler) fail(ctx context.Context, tx ports.Tx, op domain.Operation, reason string) error {
	op.Fail(domain.SanitizeText(reason), h.clock.Now())
	return tx.Operations().Update(ctx, op)
}
