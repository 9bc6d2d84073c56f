package materials

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on a transfer that did not succeed. They are shown to
// users, so they name the item by its index, never by its URL.
const (
	reasonItemFailed = "item %d could not be copied"
)

// TransferHandler copies a transfer's items into the object store for one
// material.transfer message. It is re-entrant and resumable: each item is
// recorded done in its own transaction once its object is stored, under a
// key fixed by the transfer and the item's index, so
//
//   - a finished transfer makes a duplicate delivery a no-op;
//   - a delivery after a crash starts at the first item not recorded done,
//     and fetches none of the items before it again;
//   - an item whose object was written but not recorded (a crash between
//     the two) is fetched again but not stored again: PutIfAbsent keeps the
//     first object and the record takes that object's size.
//
// The steps, each its own transaction so nothing is held open while the
// source or the store is called:
//
//  1. read the operation and the transfer; finished: done. Otherwise both
//     become running.
//  2. for each item not done, in order: fetch it, PutIfAbsent it under
//     ObjectKey, then record it done (a transfer finished meanwhile by a
//     concurrent delivery stops this one).
//  3. every item done: the transfer and the operation succeed.
//
// Errors: a transient source failure (CodeUnavailable), a cancelled
// context and any object store or database failure are returned as they
// are, so the message is delivered again and resumes; the transfer stays
// running. A permanent source error on an item (CodeNotFound,
// CodeValidation, ...) ends the transfer and the operation failed with a
// sanitized reason naming the item's index, and returns nil. A message that
// can never succeed (not this event type, a payload that does not decode,
// an operation that does not exist or does not track the transfer) is
// CodeValidation or CodeNotFound.
type TransferHandler struct {
	uow    ports.UnitOfWork
	source ports.MaterialSource
	store  ports.ObjectStore
	clock  ports.Clock
	log    *slog.Logger
}

var _ ports.MessageHandler = (*TransferHandler)(nil)

// NewTransferHandler builds the handler; log may be nil.
func NewTransferHandler(uow ports.UnitOfWork, source ports.MaterialSource, store ports.ObjectStore, clock ports.Clock, log *slog.Logger) *TransferHandler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TransferHandler{uow: uow, source: source, store: store, clock: clock, log: log.With("handler", domain.EventMaterialTransfer)}
}

// Handle processes one delivery; see TransferHandler.
func (h *TransferHandler) Handle(ctx context.Context, msg ports.Message) error {
	job, err := decode(msg)
	if err != nil {
		return err
	}
	ws := msg.WorkspaceID
	log := h.log.With("message", msg.ID, "workspace", ws, "operation", job.OperationID, "transfer", job.TransferID)

	transfer, proceed, err := h.start(ctx, ws, job, log)
	if err != nil || !proceed {
		return err
	}
	for _, item := range transfer.Items {
		if item.Done {
			continue
		}
		stop, err := h.copyItem(ctx, ws, job, item, log)
		if err != nil || stop {
			return err
		}
	}
	return h.finish(ctx, ws, job, log)
}

// copyItem fetches, stores and records one item. stop is true when the
// transfer ended (failed here, or finished by a concurrent delivery).
func (h *TransferHandler) copyItem(ctx context.Context, ws uuid.UUID, job domain.MaterialTransferRun, item domain.MaterialItem, log *slog.Logger) (stop bool, err error) {
	log = log.With("item", item.Index)
	data, contentType, err := h.source.Fetch(ctx, item.SourceURL)
	if err != nil {
		if platformerr.Retryable(ctx, err) {
			log.Warn("source unavailable, transfer will resume", "error", domain.SanitizeError(err))
			return true, err
		}
		// Sanitized, so a source that quotes the URL loses its query.
		reason := platformerr.Reason(fmt.Sprintf(reasonItemFailed, item.Index), err)
		log.Info("item cannot be fetched, transfer failed", "reason", reason)
		return true, Task.EndJob(ctx, h.uow, ws, job.OperationID, job.TransferID, reason, h.clock)
	}

	key := ObjectKey(ws, job.TransferID, item.Index)
	created, err := h.store.PutIfAbsent(ctx, key, data, contentType)
	if err != nil {
		log.Warn("object store unavailable, transfer will resume", "error", domain.SanitizeError(err))
		return true, err
	}
	size := int64(len(data))
	if !created {
		// Stored by an earlier delivery that died before recording it: the
		// record describes the object that is there, not the bytes we hold.
		info, err := h.store.Stat(ctx, key)
		if err != nil {
			return true, err
		}
		size = info.Size
		log.Info("item already stored by an earlier delivery")
	}

	err = jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		stop = false
		t, err := tx.MaterialTransfers().Get(ctx, job.TransferID)
		if err != nil {
			return err
		}
		if t.Status.Finished() {
			log.Info("transfer finished by a concurrent delivery", "status", t.Status)
			stop = true
			return nil
		}
		return tx.MaterialTransfers().MarkItemDone(ctx, job.TransferID, item.Index, key, size)
	})
	if err != nil {
		return true, err
	}
	return stop, nil
}

// decode reads and checks the payload.
func decode(msg ports.Message) (domain.MaterialTransferRun, error) {
	return jobs.Decode(msg, domain.EventMaterialTransfer, func(j domain.MaterialTransferRun) bool {
		return j.TransferID != uuid.Nil && j.OperationID != uuid.Nil
	})
}

// start is step 1. proceed is false when there is nothing (more) to do.
func (h *TransferHandler) start(ctx context.Context, ws uuid.UUID, job domain.MaterialTransferRun, log *slog.Logger) (transfer domain.MaterialTransfer, proceed bool, err error) {
	err = jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		proceed = false
		var op domain.Operation
		op, transfer, err = Task.Load(ctx, tx, job.OperationID, job.TransferID)
		if err != nil {
			return err
		}
		if transfer.Status.Finished() {
			log.Info("transfer already finished: duplicate delivery", "status", transfer.Status)
			return nil
		}
		proceed = true
		return Task.Start(ctx, tx, op, transfer, h.clock.Now())
	})
	if err != nil {
		return domain.MaterialTransfer{}, false, err
	}
	return transfer, proceed, nil
}

// finish is step 3: it checks again that every item is recorded done.
func (h *TransferHandler) finish(ctx context.Context, ws uuid.UUID, job domain.MaterialTransferRun, log *slog.Logger) error {
	return jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		op, t, err := Task.Load(ctx, tx, job.OperationID, job.TransferID)
		if err != nil {
			return err
		}
		if t.Status.Finished() {
			log.Info("transfer finished by a concurrent delivery", "status", t.Status)
			return nil
		}
		for _, item := range t.Items {
			if !item.Done {
				return domain.Errorf(domain.CodeInternal, "item %d of transfer %s is not recorded done", item.Index, t.ID)
			}
		}
		now := h.clock.Now()
		t.Status, t.Reason, t.UpdatedAt = domain.TaskSucceeded, "", now
		if err := tx.MaterialTransfers().UpdateStatus(ctx, t); err != nil {
			return err
		}
		op.Succeed(now)
		log.Info("transfer succeeded", "items", len(t.Items))
		return tx.Operations().Update(ctx, op)
	})
}
