package catalog

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on a sync (and its operation) that failed. They are
// shown to users and carry nothing of the credentials.
const (
	ReasonStoreNotFound   = "the store no longer exists"
	ReasonPlatformRefused = "the platform refused the catalog read"
)

// SyncHandler runs one catalog.sync message: it reads the store's listings
// from the platform and stores them in our catalogue. Reading has no side
// effect on the platform and the catalogue is written by upsert keyed on
// (store, external id), so running a sync again, wholly or in part, leaves
// the catalogue as one run would; the sync's state stops a duplicate
// delivery from running it at all.
//
// The steps, each its own transaction so nothing is held open while the
// platform is called:
//
//  1. read the operation and the sync; either finished means a duplicate
//     delivery: done. Read the store; if it is gone the sync fails.
//     Otherwise sync and operation become running.
//  2. open the store's credentials and call FetchCatalog, outside any
//     transaction.
//  3. in one transaction, check again that the sync is unfinished, upsert
//     the listings, record how many were synced and end sync and operation
//     succeeded.
//
// Listings the shop no longer has stay in the catalogue: the port has no
// delete, and a sync only adds and refreshes.
//
// Errors: a transport failure (CodeUnavailable), a cancelled context, a
// credential that cannot be opened or a failure to record the outcome are
// returned as they are, so the message is delivered again; the sync stays
// running (and keeps the store's one active slot). A message that can
// never succeed (not this event type, a payload that does not decode, an
// operation or sync that does not exist or does not match) is
// CodeValidation or CodeNotFound. A permanent platform error ends the sync
// failed, with a sanitized reason, and returns nil.
type SyncHandler struct {
	uow     ports.UnitOfWork
	gateway ports.PlatformGateway
	sealer  ports.CredentialSealer
	clock   ports.Clock
	log     *slog.Logger
}

var _ ports.MessageHandler = (*SyncHandler)(nil)

// NewSyncHandler builds the handler; log may be nil.
func NewSyncHandler(uow ports.UnitOfWork, gateway ports.PlatformGateway, sealer ports.CredentialSealer, clock ports.Clock, log *slog.Logger) *SyncHandler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SyncHandler{uow: uow, gateway: gateway, sealer: sealer, clock: clock, log: log.With("handler", domain.EventCatalogSync)}
}

// Handle processes one delivery; see SyncHandler.
func (h *SyncHandler) Handle(ctx context.Context, msg ports.Message) error {
	job, err := decode(msg)
	if err != nil {
		return err
	}
	log := h.log.With("message", msg.ID, "workspace", msg.WorkspaceID, "operation", job.OperationID, "sync", job.SyncID)

	store, proceed, err := h.start(ctx, msg.WorkspaceID, job, log)
	if err != nil || !proceed {
		return err
	}
	log = log.With("store", store.ID)

	creds, err := stores.OpenCredentials(h.sealer, store)
	if err != nil {
		log.Error("store credentials cannot be opened", "error", domain.SanitizeError(err))
		return err
	}
	listings, err := h.gateway.FetchCatalog(ctx, ports.FetchCatalogRequest{
		Platform:       store.Platform,
		ExternalShopID: store.ExternalShopID,
		Credentials:    creds,
	})
	if err != nil {
		if platformerr.Retryable(ctx, err) {
			log.Warn("platform unavailable, sync will be retried", "error", domain.SanitizeError(err))
			return err
		}
		log.Error("platform refused the catalog read", "error", domain.SanitizeError(err))
		return h.finish(ctx, msg.WorkspaceID, job, nil, platformerr.Reason(ReasonPlatformRefused, err), log)
	}
	return h.finish(ctx, msg.WorkspaceID, job, items(msg.WorkspaceID, store.ID, listings, h.clock), "", log)
}

// decode reads and checks the payload.
func decode(msg ports.Message) (domain.CatalogSyncRun, error) {
	return jobs.Decode(msg, domain.EventCatalogSync, func(j domain.CatalogSyncRun) bool {
		return j.SyncID != uuid.Nil && j.OperationID != uuid.Nil
	})
}

// start is step 1. proceed is false when there is nothing (more) to do.
func (h *SyncHandler) start(ctx context.Context, ws uuid.UUID, job domain.CatalogSyncRun, log *slog.Logger) (store domain.Store, proceed bool, err error) {
	err = jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		proceed = false
		op, cs, err := Task.Load(ctx, tx, job.OperationID, job.SyncID)
		if err != nil {
			return err
		}
		if Task.Finished(op, cs) {
			log.Info("sync already finished: duplicate delivery", "status", cs.Status)
			return nil
		}
		store, err = tx.Stores().Get(ctx, cs.StoreID)
		if domain.IsCode(err, domain.CodeNotFound) {
			log.Warn("store not found, sync failed")
			return Task.End(ctx, tx, op, cs, ReasonStoreNotFound, h.clock.Now())
		}
		if err != nil {
			return err
		}
		proceed = true
		return Task.Start(ctx, tx, op, cs, h.clock.Now())
	})
	if err != nil {
		return domain.Store{}, false, err
	}
	return store, proceed, nil
}

// finish is step 3: the items on success, reason on a permanent failure.
func (h *SyncHandler) finish(ctx context.Context, ws uuid.UUID, job domain.CatalogSyncRun, items []domain.CatalogItem, reason string, log *slog.Logger) error {
	return jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		op, cs, err := Task.Load(ctx, tx, job.OperationID, job.SyncID)
		if err != nil {
			return err
		}
		if Task.Finished(op, cs) {
			log.Info("sync finished by a concurrent delivery", "status", cs.Status)
			return nil
		}
		if reason != "" {
			log.Info("sync failed", "reason", reason)
			return Task.End(ctx, tx, op, cs, reason, h.clock.Now())
		}
		if len(items) > 0 {
			if err := tx.Syncs().UpsertItems(ctx, items); err != nil {
				return err
			}
		}
		now := h.clock.Now()
		cs.Status, cs.ItemsSynced, cs.Reason, cs.UpdatedAt = domain.TaskSucceeded, len(items), "", now
		op.Succeed(now)
		if err := tx.Syncs().Update(ctx, cs); err != nil {
			return err
		}
		log.Info("catalog synced", "items", len(items))
		return tx.Operations().Update(ctx, op)
	})
}

// items turns the platform's listings into catalogue rows. A listing the
// platform reports twice is stored once (the last report wins), so
// ItemsSynced counts distinct listings.
func items(ws, storeID uuid.UUID, listings []ports.CatalogListing, clock ports.Clock) []domain.CatalogItem {
	now := clock.Now()
	out := make([]domain.CatalogItem, 0, len(listings))
	at := make(map[string]int, len(listings))
	for _, l := range listings {
		item := domain.CatalogItem{
			WorkspaceID: ws,
			StoreID:     storeID,
			ExternalID:  l.ExternalID,
			Title:       l.Title,
			PriceMinor:  l.PriceMinor,
			Currency:    l.Currency,
			SyncedAt:    now,
		}
		if i, ok := at[l.ExternalID]; ok {
			out[i] = item
			continue
		}
		at[l.ExternalID] = len(out)
		out = append(out, item)
	}
	return out
}
