package media

import (
	"context"
	"errors"
	"image"
	"log/slog"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on an operation that ended without the media being
// processed by it.
const (
	ReasonMediaNotFound = "the media no longer exists"
	reasonNotCompleted  = "the media upload was not completed"
)

// ProcessHandler validates the content of completed media and derives
// its variants, for one media.process message; the lifecycle is jobs.Job
// over the operation (jobs.OnOperation). Every variant is written with
// PutIfAbsent under a key that depends only on the media and the variant,
// so a redelivered message never makes a second object, even when the
// first delivery died after writing the variants and before recording
// them. The call reads the original and checks it (the registered size and
// content type, bytes that really decode as that format, PNG or JPEG,
// within MaxPixels), then derives every variant of
// model.MediaVariantNames, scaled to fit its box in the original's
// format. Content that fails is a result, not an error: the media is
// rejected and the operation failed, both with a reason safe to show. A
// storage failure is retried.
type ProcessHandler = jobs.Handler[model.MediaProcess, model.Media, []model.MediaVariant]

// NewProcessHandler builds the handler; log may be nil.
func NewProcessHandler(uow ports.UnitOfWork, store ports.ObjectStore, clock ports.Clock, log *slog.Logger) *ProcessHandler {
	p := &processor{store: store}
	op := jobs.OnOperation[model.MediaProcess, model.Media, []model.MediaVariant]{
		Kind: Task.OperationKind, Check: check, Record: record,
	}
	return jobs.NewHandler(jobs.Job[model.MediaProcess, model.Media, []model.MediaVariant]{
		Event: Task.EventType, Noun: "media", External: "object store", Refused: ReasonNotAnImage,
		Begin: op.Begin, Call: p.process, End: op.End,
	}, uow, clock, log)
}

// processor holds what steps 2 and 3 call.
type processor struct {
	store ports.ObjectStore
}

// process is steps 2 and 3: the variants, or jobs.Fail with the reason
// the content is rejected.
func (h *processor) process(ctx context.Context, log *slog.Logger, _ jobs.Run[model.MediaProcess], m model.Media) ([]model.MediaVariant, error) {
	data, _, err := h.store.Get(ctx, m.ObjectKey)
	if domain.IsCode(err, domain.CodeNotFound) {
		return nil, jobs.Fail(ReasonContentMissing)
	}
	if err != nil {
		log.Warn("original cannot be read, processing will be retried", "error", domain.SanitizeError(err))
		return nil, jobs.Retry(err)
	}
	img, err := decode(m, data)
	if err != nil {
		return nil, rejected(err)
	}
	format := ContentTypes[m.ContentType]
	variants := make([]model.MediaVariant, 0, len(model.MediaVariantNames))
	for _, name := range model.MediaVariantNames {
		v, err := h.writeVariant(ctx, m, img, name, format)
		if err != nil {
			var r *rejection
			if errors.As(err, &r) {
				return nil, rejected(r)
			}
			log.Warn("variant cannot be stored, processing will be retried", "variant", name, "error", domain.SanitizeError(err))
			return nil, jobs.Retry(err)
		}
		variants = append(variants, v)
	}
	return variants, nil
}

// rejected is the verdict on content that failed validation or
// derivation: the media is rejected with its reason.
func rejected(verdict error) error {
	var r *rejection
	if errors.As(verdict, &r) && r.reason != "" {
		return jobs.Fail(r.reason)
	}
	return jobs.Fail(ReasonNotAnImage)
}

// record is step 4: the variants recorded and the media ready, or the
// media rejected with reason.
func record(ctx context.Context, tx ports.Tx, log *slog.Logger, m model.Media, variants []model.MediaVariant, reason string, now time.Time) error {
	if reason == "" {
		m.Status, m.Variants, m.Reason, m.UpdatedAt = model.MediaReady, variants, "", now
		log.Info("media ready", "variants", len(variants))
	} else {
		m.Status, m.Reason, m.UpdatedAt = model.MediaRejected, reason, now
		log.Info("media rejected", "reason", reason)
	}
	return tx.Media().Update(ctx, m)
}

// check reads the media of an unfinished operation. done is true when the
// media's state settled the operation here (gone, or ready or rejected by
// another operation), in which case check records the outcome on the
// operation. Otherwise the media is processing.
func check(ctx context.Context, tx ports.Tx, log *slog.Logger, run jobs.Run[model.MediaProcess], op model.Operation, now time.Time) (m model.Media, done bool, err error) {
	m, err = tx.Media().Get(ctx, run.TaskID)
	if domain.IsCode(err, domain.CodeNotFound) {
		log.Warn("media not found, operation failed")
		return m, true, jobs.EndOperation(ctx, tx, op, ReasonMediaNotFound, now)
	}
	if err != nil {
		return m, false, err
	}
	switch m.Status {
	case model.MediaProcessing:
		return m, false, nil
	case model.MediaReady:
		log.Info("media already ready: processed by another operation")
		op.Succeed(now)
		return m, true, jobs.SaveEnded(ctx, tx, op)
	case model.MediaRejected:
		log.Info("media already rejected by another operation")
		return m, true, jobs.EndOperation(ctx, tx, op, m.Reason, now)
	default:
		log.Warn("media is not completed, operation failed", "media_status", m.Status)
		return m, true, jobs.EndOperation(ctx, tx, op, reasonNotCompleted, now)
	}
}

// writeVariant derives one variant and writes it once. If an earlier
// attempt already stored it, that object is kept and described.
func (h *processor) writeVariant(ctx context.Context, m model.Media, img image.Image, name, format string) (model.MediaVariant, error) {
	data, err := derive(img, name, format)
	if err != nil {
		return model.MediaVariant{}, err
	}
	key := VariantKey(m.WorkspaceID, m.ID, name)
	created, err := h.store.PutIfAbsent(ctx, key, data, m.ContentType)
	if err != nil {
		return model.MediaVariant{}, err
	}
	size := int64(len(data))
	if !created {
		info, err := h.store.Stat(ctx, key)
		if err != nil {
			return model.MediaVariant{}, err
		}
		size = info.Size
	}
	return model.MediaVariant{Name: name, ObjectKey: key, SizeBytes: size}, nil
}
