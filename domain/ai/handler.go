package ai

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on a task that did not succeed. They are shown to users.
const (
	ReasonProductNotFound = "the product no longer exists"
	ReasonNoImage         = "the provider returned no image"
	reasonProviderError   = "the AI provider refused the request"
)

// DefaultImageContentType is assumed when the provider does not say.
const DefaultImageContentType = "image/png"

// TaskHandler runs one AI task for one ai.task message. It is re-entrant:
// the task's state says whether the work is done, the task id is the
// provider's request token (the provider charges a token once and answers a
// repeat with the first result), the billing record is unique per task, and
// a generated image goes under a key and a media id derived from the task.
// So a redelivered message never pays or bills twice and never makes a
// second image, even when the first delivery died after the provider had
// acted or after the image was stored.
//
// The steps, none holding a transaction open while the provider or the
// object store is called:
//
//  1. read the operation, the task and its product; a finished task means a
//     duplicate delivery: done. A product that no longer exists fails the
//     task. Otherwise the task and the operation become running.
//  2. call the provider with the product's title and description and the
//     task's instructions.
//  3. for an image: PutIfAbsent it under ImageObjectKey.
//  4. in one transaction: bill the task (once: an existing record is kept),
//     for an image register its media row (ImageMediaID, ready, no
//     variants) unless it exists, store the result (text, category, or the
//     media id) and mark the task and the operation succeeded.
//
// Errors: a transient provider failure (CodeUnavailable), a cancelled
// context and any object store or database failure are returned as they
// are, so the message is delivered again; the task stays running. A
// concurrent delivery of the same message that is recording the task at the
// same moment makes this one return CodeUnavailable (retry), or nil once
// that delivery has finished the task. A
// permanent provider error (content policy, bad request) ends the task and
// the operation failed with a sanitized reason and returns nil. A message
// that can never succeed (not this event type, a payload that does not
// decode, an operation that does not exist or does not track the task) is
// CodeValidation or CodeNotFound.
type TaskHandler struct {
	uow      ports.UnitOfWork
	provider ports.AIProvider
	store    ports.ObjectStore
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
}

var _ ports.MessageHandler = (*TaskHandler)(nil)

// NewTaskHandler builds the handler; log may be nil. ids is kept for ids
// that need not be stable across deliveries; the ones that must (the media
// id of an image) are derived from the task.
func NewTaskHandler(uow ports.UnitOfWork, provider ports.AIProvider, store ports.ObjectStore, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger) *TaskHandler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TaskHandler{uow: uow, provider: provider, store: store, clock: clock, ids: ids, log: log.With("handler", domain.EventAITask)}
}

// generated is what steps 2 and 3 produced, for step 4.
type generated struct {
	result ports.AIResult
	// image is set for image tasks: the stored object.
	image *ports.ObjectInfo
}

// Handle processes one delivery; see TaskHandler.
func (h *TaskHandler) Handle(ctx context.Context, msg ports.Message) error {
	job, err := decode(msg)
	if err != nil {
		return err
	}
	ws := msg.WorkspaceID
	log := h.log.With("message", msg.ID, "workspace", ws, "operation", job.OperationID, "task", job.TaskID)

	task, product, proceed, err := h.start(ctx, ws, job, log)
	if err != nil || !proceed {
		return err
	}
	log = log.With("kind", task.Kind)

	result, err := h.provider.Generate(ctx, ports.AIRequest{
		RequestToken: task.ID.String(),
		Kind:         task.Kind,
		Title:        product.Title,
		Description:  product.Description,
		Instructions: task.Instructions,
	})
	if err != nil {
		if platformerr.Retryable(ctx, err) {
			log.Warn("provider unavailable, task will be retried", "error", domain.SanitizeError(err))
			return err
		}
		reason := platformerr.Reason(reasonProviderError, err)
		log.Info("provider refused the task", "reason", reason)
		return Task.EndJob(ctx, h.uow, ws, job.OperationID, job.TaskID, reason, h.clock)
	}

	out := generated{result: result}
	if task.Kind == domain.AIImage {
		if len(result.Image) == 0 {
			log.Error("provider returned no image")
			return Task.EndJob(ctx, h.uow, ws, job.OperationID, job.TaskID, ReasonNoImage, h.clock)
		}
		info, err := h.storeImage(ctx, ws, task, result)
		if err != nil {
			log.Warn("object store unavailable, task will be retried", "error", domain.SanitizeError(err))
			return err
		}
		out.image = &info
	}
	err = h.record(ctx, ws, job, out, log)
	if domain.IsCode(err, domain.CodeConflict) {
		return h.settleRace(ctx, ws, job, err, log)
	}
	return err
}

// settleRace handles a recording transaction that lost a race with a
// concurrent delivery of the same message (both tried to register the same
// media row): if the other delivery finished the task, this one is done;
// if not yet (it may still roll back), the message is retried, which a
// conflict code would not be.
func (h *TaskHandler) settleRace(ctx context.Context, ws uuid.UUID, job domain.AITaskRun, cause error, log *slog.Logger) error {
	var status domain.TaskStatus
	err := jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		task, err := tx.AITasks().Get(ctx, job.TaskID)
		status = task.Status
		return err
	})
	if err != nil {
		return err
	}
	if status.Finished() {
		log.Info("task finished by a concurrent delivery", "status", status)
		return nil
	}
	log.Info("a concurrent delivery is recording the task, retrying", "error", domain.SanitizeError(cause))
	return domain.Wrap(domain.CodeUnavailable, cause, "a concurrent delivery is recording this AI task")
}

// storeImage is step 3. The object is written before the transaction that
// registers it, never inside: if that transaction fails, the redelivery
// finds the object and does not write another.
func (h *TaskHandler) storeImage(ctx context.Context, ws uuid.UUID, task domain.AITask, result ports.AIResult) (ports.ObjectInfo, error) {
	key := ImageObjectKey(ws, task.ID)
	contentType := result.ImageContentType
	if contentType == "" {
		contentType = DefaultImageContentType
	}
	created, err := h.store.PutIfAbsent(ctx, key, result.Image, contentType)
	if err != nil {
		return ports.ObjectInfo{}, err
	}
	if created {
		return ports.ObjectInfo{Key: key, Size: int64(len(result.Image)), ContentType: contentType}, nil
	}
	// Stored by an earlier delivery: describe the object that is there.
	return h.store.Stat(ctx, key)
}

// decode reads and checks the payload.
func decode(msg ports.Message) (domain.AITaskRun, error) {
	return jobs.Decode(msg, domain.EventAITask, func(j domain.AITaskRun) bool {
		return j.TaskID != uuid.Nil && j.OperationID != uuid.Nil
	})
}

// start is step 1. proceed is false when there is nothing (more) to do.
func (h *TaskHandler) start(ctx context.Context, ws uuid.UUID, job domain.AITaskRun, log *slog.Logger) (task domain.AITask, product domain.Product, proceed bool, err error) {
	err = jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		proceed = false
		var op domain.Operation
		op, task, err = Task.Load(ctx, tx, job.OperationID, job.TaskID)
		if err != nil {
			return err
		}
		if task.Status.Finished() {
			log.Info("task already finished: duplicate delivery", "status", task.Status)
			return nil
		}
		product, err = tx.Products().Get(ctx, task.ProductID)
		if domain.IsCode(err, domain.CodeNotFound) {
			log.Warn("product not found, task failed")
			return Task.End(ctx, tx, op, task, ReasonProductNotFound, h.clock.Now())
		}
		if err != nil {
			return err
		}
		proceed = true
		return Task.Start(ctx, tx, op, task, h.clock.Now())
	})
	if err != nil {
		return domain.AITask{}, domain.Product{}, false, err
	}
	return task, product, proceed, nil
}

// record is step 4.
func (h *TaskHandler) record(ctx context.Context, ws uuid.UUID, job domain.AITaskRun, out generated, log *slog.Logger) error {
	return jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		op, task, err := Task.Load(ctx, tx, job.OperationID, job.TaskID)
		if err != nil {
			return err
		}
		if task.Status.Finished() {
			log.Info("task finished by a concurrent delivery", "status", task.Status)
			return nil
		}
		now := h.clock.Now()
		billed, err := tx.AITasks().Bill(ctx, domain.BillingRecord{
			WorkspaceID: ws, TaskID: task.ID, Units: out.result.Units, CreatedAt: now,
		})
		if err != nil {
			return err
		}
		if !billed {
			// Billed by a committed delivery (which also finished the task,
			// in the same transaction, so a concurrent one) or by one still
			// open, which may roll back: recording the result without a
			// visible bill could leave the task unbilled, so wait for it.
			records, err := tx.AITasks().BillingRecords(ctx, task.ID)
			if err != nil {
				return err
			}
			if len(records) == 0 {
				return domain.Errorf(domain.CodeConflict, "AI task %s is being billed by a concurrent delivery", task.ID)
			}
			log.Info("task already billed")
		}

		switch task.Kind {
		case domain.AIText:
			task.Result = out.result.Text
		case domain.AICategory:
			task.Result = out.result.Category
		case domain.AIImage:
			id, err := h.registerImage(ctx, tx, task, *out.image, now)
			if err != nil {
				return err
			}
			task.Result = id.String()
		}
		task.Status, task.Reason, task.UpdatedAt = domain.TaskSucceeded, "", now
		if err := tx.AITasks().Update(ctx, task); err != nil {
			return err
		}
		op.Succeed(now)
		log.Info("task succeeded", "units", out.result.Units)
		return tx.Operations().Update(ctx, op)
	})
}

// registerImage creates the media row of a generated image unless an
// earlier attempt did, and returns its id.
func (h *TaskHandler) registerImage(ctx context.Context, tx ports.Tx, task domain.AITask, obj ports.ObjectInfo, now time.Time) (uuid.UUID, error) {
	id := ImageMediaID(task.ID)
	_, err := tx.Media().Get(ctx, id)
	if err == nil {
		return id, nil
	}
	if !domain.IsCode(err, domain.CodeNotFound) {
		return uuid.Nil, err
	}
	return id, tx.Media().Create(ctx, domain.Media{
		ID:          id,
		WorkspaceID: task.WorkspaceID,
		Filename:    ImageFilename(task.ID),
		ContentType: obj.ContentType,
		SizeBytes:   obj.Size,
		ObjectKey:   obj.Key,
		Status:      domain.MediaReady,
		Variants:    []domain.MediaVariant{},
		CreatedAt:   now,
		UpdatedAt:   now,
	})
}
