package materials

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on a transfer that did not succeed. They are shown to
// users, so they name the item by its index, never by its URL.
const (
	reasonItemFailed = "item %d could not be copied"
)

// TransferHandler copies a transfer's items into the object store for one
// material.transfer message (the lifecycle is jobs.Job). It is re-entrant
// and resumable: each item is recorded done in its own transaction once
// its object is stored, under a key fixed by the transfer and the item's
// index, so
//
//   - a finished transfer makes a duplicate delivery a no-op;
//   - a delivery after a crash starts at the first item not recorded done,
//     and fetches none of the items before it again;
//   - an item whose object was written but not recorded (a crash between
//     the two) is fetched again but not stored again: PutIfAbsent keeps the
//     first object and the record takes that object's size.
//
// Step 2 is, for each item not done, in order: fetch it, PutIfAbsent it
// under ObjectKey, then record it done (a transfer finished meanwhile by a
// concurrent delivery stops this one). Step 3 checks every item is done and
// ends the transfer succeeded. A transient source failure and any object
// store failure are retried and resume; a permanent source error on an
// item ends the transfer failed with a reason naming the item's index.
type TransferHandler = jobs.Handler[model.MaterialTransferRun, model.MaterialTransfer, struct{}]

// NewTransferHandler builds the handler; log may be nil.
func NewTransferHandler(uow ports.UnitOfWork, source ports.MaterialSource, store ports.ObjectStore, clock ports.Clock, log *slog.Logger) *TransferHandler {
	h := &copier{uow: uow, source: source, store: store}
	row := jobs.OnRow[model.MaterialTransferRun, model.MaterialTransfer, model.TaskStatus, model.MaterialTransfer, struct{}]{
		Task: Task.TaskRow, Record: record,
		Prepare: func(_ context.Context, _ ports.Tx, _ *slog.Logger, t model.MaterialTransfer) (model.MaterialTransfer, string, error) {
			return t, "", nil
		},
	}
	return jobs.NewHandler(jobs.Job[model.MaterialTransferRun, model.MaterialTransfer, struct{}]{
		Event: Task.EventType, Noun: "transfer", External: "source",
		// A transfer only reads from its source; stopped midway, the items
		// it copied stay in our object store, recorded done.
		Begin: row.Begin, Call: h.copyAll, End: row.End, Stop: row.Stop,
	}, uow, clock, log)
}

// copier holds what step 2 calls.
type copier struct {
	uow    ports.UnitOfWork
	source ports.MaterialSource
	store  ports.ObjectStore
}

// copyAll is step 2: every item not done yet, in order.
func (h *copier) copyAll(ctx context.Context, log *slog.Logger, run jobs.Run[model.MaterialTransferRun], transfer model.MaterialTransfer) (struct{}, error) {
	for _, item := range transfer.Items {
		if item.Done {
			continue
		}
		stop, err := h.copyItem(ctx, run, item, log)
		if err != nil || stop {
			return struct{}{}, err
		}
	}
	return struct{}{}, nil
}

// copyItem fetches, stores and records one item. stop is true when a
// concurrent delivery finished the transfer (step 3 sees it finished).
func (h *copier) copyItem(ctx context.Context, run jobs.Run[model.MaterialTransferRun], item model.MaterialItem, log *slog.Logger) (stop bool, err error) {
	log = log.With("item", item.Index)
	data, contentType, err := h.source.Fetch(ctx, item.SourceURL)
	if err != nil {
		if platformerr.Retryable(ctx, err) {
			log.Warn("source unavailable, transfer will resume", "error", domain.SanitizeError(err))
			return true, jobs.Retry(err)
		}
		// Sanitized, so a source that quotes the URL loses its query.
		reason := platformerr.Reason(fmt.Sprintf(reasonItemFailed, item.Index), err)
		log.Info("item cannot be fetched, transfer failed", "reason", reason)
		return true, jobs.Fail(reason)
	}

	key := ObjectKey(run.Workspace, run.TaskID, item.Index)
	created, err := h.store.PutIfAbsent(ctx, key, data, contentType)
	if err != nil {
		log.Warn("object store unavailable, transfer will resume", "error", domain.SanitizeError(err))
		return true, jobs.Retry(err)
	}
	size := int64(len(data))
	if !created {
		// Stored by an earlier delivery that died before recording it: the
		// record describes the object that is there, not the bytes we hold.
		info, err := h.store.Stat(ctx, key)
		if err != nil {
			return true, jobs.Retry(err)
		}
		size = info.Size
		log.Info("item already stored by an earlier delivery")
	}

	err = jobs.Transact(ctx, h.uow, run.Workspace, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		stop = false
		t, err := ports.Repository[ports.MaterialTransferRepository](tx).Get(ctx, run.TaskID)
		if err != nil {
			return err
		}
		if t.Status.Finished() {
			stop = true
			return nil
		}
		return ports.Repository[ports.MaterialTransferRepository](tx).MarkItemDone(ctx, run.TaskID, item.Index, key, size)
	})
	if err != nil {
		return true, jobs.Retry(err)
	}
	return stop, nil
}

// record is step 3 on success: it checks again that every item is
// recorded done.
func record(ctx context.Context, tx ports.Tx, log *slog.Logger, t model.MaterialTransfer, _ struct{}, now time.Time) error {
	for _, item := range t.Items {
		if !item.Done {
			return domain.Errorf(domain.CodeInternal, "item %d of transfer %s is not recorded done", item.Index, t.ID)
		}
	}
	t.Status, t.Reason, t.UpdatedAt = model.TaskSucceeded, "", now
	log.Info("transfer succeeded", "items", len(t.Items))
	return ports.Repository[ports.MaterialTransferRepository](tx).UpdateStatus(ctx, t)
}
