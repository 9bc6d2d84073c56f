package ai

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
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

// TaskHandler runs one AI task for one ai.task message (the lifecycle is
// jobs.Job). The job's request token (derived from the request that
// started the task; the task id for a job that has none,
// domain/model/request_token.go) goes to the provider, which charges a
// token once and answers a repeat with the first result; the
// billing record is unique per task, and a generated image goes under a
// key and a media id derived from the task. So a redelivered message never
// pays or bills twice and never makes a second image, even when the first
// delivery died after the provider had acted or after the image was
// stored.
//
//  1. a task whose product no longer exists fails.
//  2. call the provider with the product's title and description and the
//     task's instructions; for an image, PutIfAbsent it under
//     ImageObjectKey (an object store failure is retried; no image is
//     ReasonNoImage).
//  3. bill the task (once: an existing record is kept), for an image
//     register its media row (ImageMediaID, ready, no variants) unless it
//     exists, store the result (text, category, or the media id) and mark
//     the task succeeded.
//
// A concurrent delivery of the same message that is recording the task at
// the same moment makes this one return CodeUnavailable (retry), or nil
// once that delivery has finished the task (settleRace).
type TaskHandler = jobs.Handler[model.AITaskRun, work, generated]

// NewTaskHandler builds the handler; log may be nil. ids is kept for ids
// that need not be stable across deliveries; the ones that must (the media
// id of an image) are derived from the task.
func NewTaskHandler(uow ports.UnitOfWork, provider ports.AIProvider, store ports.ObjectStore, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger) *TaskHandler {
	h := &steps{uow: uow, provider: provider, store: store}
	row := jobs.OnRow[model.AITaskRun, model.AITask, model.TaskStatus, work, generated]{
		Task: Task.TaskRow, Prepare: prepare, Record: record,
	}
	return jobs.NewHandler(jobs.Job[model.AITaskRun, work, generated]{
		Event: Task.EventType, Noun: "task", External: "provider", Refused: reasonProviderError,
		Begin: row.Begin, Call: h.call, End: row.End, Settle: h.settleRace,
	}, uow, clock, log)
}

// steps holds what the AI task's own steps call.
type steps struct {
	uow      ports.UnitOfWork
	provider ports.AIProvider
	store    ports.ObjectStore
}

// work is what step 1 hands step 2.
type work struct {
	task    model.AITask
	product model.Product
}

// generated is what step 2 produced, for step 3.
type generated struct {
	result ports.AIResult
	// image is set for image tasks: the stored object.
	image *ports.ObjectInfo
}

// prepare is step 1: the task's product.
func prepare(ctx context.Context, tx ports.Tx, _ *slog.Logger, task model.AITask) (work, string, error) {
	product, err := tx.Products().Get(ctx, task.ProductID)
	if domain.IsCode(err, domain.CodeNotFound) {
		return work{}, ReasonProductNotFound, nil
	}
	return work{task: task, product: product}, "", err
}

// call is step 2.
func (h *steps) call(ctx context.Context, log *slog.Logger, run jobs.Run[model.AITaskRun], w work) (generated, error) {
	task := w.task
	log = log.With("kind", task.Kind)
	result, err := h.provider.Generate(ctx, ports.AIRequest{
		RequestToken: run.Job.TokenOr(task.ID), Kind: task.Kind,
		Title: w.product.Title, Description: w.product.Description, Instructions: task.Instructions,
	})
	out := generated{result: result}
	if err != nil || task.Kind != model.AIImage {
		return out, err
	}
	if len(result.Image) == 0 {
		log.Error("provider returned no image")
		return out, jobs.Fail(ReasonNoImage)
	}
	info, err := h.storeImage(ctx, run.Workspace, task, result)
	if err != nil {
		log.Warn("object store unavailable, task will be retried", "error", domain.SanitizeError(err))
		return out, jobs.Retry(err)
	}
	out.image = &info
	return out, nil
}

// settleRace handles a recording transaction that lost a race with a
// concurrent delivery of the same message (both tried to register the same
// media row): if the other delivery finished the task, this one is done;
// if not yet (it may still roll back), the message is retried, which a
// conflict code would not be.
func (h *steps) settleRace(ctx context.Context, log *slog.Logger, run jobs.Run[model.AITaskRun], cause error) error {
	var status model.TaskStatus
	err := h.uow.Transact(ctx, run.Workspace, func(ctx context.Context, tx ports.Tx) error {
		task, err := ports.Repository[ports.AITaskRepository](tx).Get(ctx, run.TaskID)
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

// storeImage writes the generated image. The object is written before the
// transaction that registers it, never inside: if that transaction fails,
// the redelivery finds the object and does not write another.
func (h *steps) storeImage(ctx context.Context, ws uuid.UUID, task model.AITask, result ports.AIResult) (ports.ObjectInfo, error) {
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

// record is step 3 on success.
func record(ctx context.Context, tx ports.Tx, log *slog.Logger, task model.AITask, out generated, now time.Time) error {
	billed, err := ports.Repository[ports.AITaskRepository](tx).Bill(ctx, model.BillingRecord{
		WorkspaceID: task.WorkspaceID, TaskID: task.ID, Units: out.result.Units, CreatedAt: now,
	})
	if err != nil {
		return err
	}
	if !billed {
		// Billed by a committed delivery (which also finished the task,
		// in the same transaction, so a concurrent one) or by one still
		// open, which may roll back: recording the result without a
		// visible bill could leave the task unbilled, so wait for it.
		records, err := ports.Repository[ports.AITaskRepository](tx).BillingRecords(ctx, task.ID)
		if err != nil {
			return err
		}
		if len(records) == 0 {
			return domain.Errorf(domain.CodeConflict, "AI task %s is being billed by a concurrent delivery", task.ID)
		}
		log.Info("task already billed")
	}

	switch task.Kind {
	case model.AIText:
		task.Result = out.result.Text
	case model.AICategory:
		task.Result = out.result.Category
	case model.AIImage:
		id, err := registerImage(ctx, tx, task, *out.image, now)
		if err != nil {
			return err
		}
		task.Result = id.String()
	}
	task.Status, task.Reason, task.UpdatedAt = model.TaskSucceeded, "", now
	log.Info("task succeeded", "units", out.result.Units)
	return ports.Repository[ports.AITaskRepository](tx).Update(ctx, task)
}

// registerImage creates the media row of a generated image unless an
// earlier attempt did, and returns its id.
func registerImage(ctx context.Context, tx ports.Tx, task model.AITask, obj ports.ObjectInfo, now time.Time) (uuid.UUID, error) {
	id := ImageMediaID(task.ID)
	_, err := tx.Media().Get(ctx, id)
	if err == nil {
		return id, nil
	}
	if !domain.IsCode(err, domain.CodeNotFound) {
		return uuid.Nil, err
	}
	return id, tx.Media().Create(ctx, model.Media{
		ID:          id,
		WorkspaceID: task.WorkspaceID,
		Filename:    ImageFilename(task.ID),
		ContentType: obj.ContentType,
		SizeBytes:   obj.Size,
		ObjectKey:   obj.Key,
		Status:      model.MediaReady,
		Variants:    []model.MediaVariant{},
		CreatedAt:   now,
		UpdatedAt:   now,
	})
}
