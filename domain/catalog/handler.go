package catalog

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on a sync (and its operation) that failed. They are
// shown to users and carry nothing of the credentials.
const (
	ReasonStoreNotFound   = "the store no longer exists"
	ReasonPlatformRefused = "the platform refused the catalog read"
)

// SyncHandler runs one catalog.sync message (the lifecycle is jobs.Job):
// it reads the store's listings from the platform and stores them in our
// catalogue. Reading has no side effect on the platform and the catalogue
// is written by upsert keyed on (store, external id), so running a sync
// again, wholly or in part, leaves the catalogue as one run would; the
// sync's state stops a duplicate delivery from running it at all.
//
//  1. a sync whose store is gone fails (ReasonStoreNotFound).
//  2. open the store's credentials (a failure is retried: the keyring is
//     for operators to fix) and call FetchCatalog.
//  3. upsert the listings, record how many were synced, end the sync
//     succeeded; a permanent platform error ends it failed with
//     ReasonPlatformRefused and the platform's sanitized message.
//
// Listings the shop no longer has stay in the catalogue: the port has no
// delete, and a sync only adds and refreshes.
type SyncHandler = jobs.Handler[model.CatalogSyncRun, model.Store, []model.CatalogItem]

// NewSyncHandler builds the handler; log may be nil.
func NewSyncHandler(uow ports.UnitOfWork, gateway ports.PlatformGateway, sealer ports.CredentialSealer, clock ports.Clock, log *slog.Logger) *SyncHandler {
	row := jobs.OnRow[model.CatalogSyncRun, model.CatalogSync, model.TaskStatus, model.Store, []model.CatalogItem]{
		Task: Task.TaskRow, Prepare: prepare, Record: record,
	}
	call := func(ctx context.Context, log *slog.Logger, run jobs.Run[model.CatalogSyncRun], store model.Store) ([]model.CatalogItem, error) {
		creds, err := stores.Credentials(sealer, store, log)
		if err != nil {
			return nil, err
		}
		listings, err := gateway.FetchCatalog(ctx, ports.FetchCatalogRequest{
			Platform: store.Platform, ExternalShopID: store.ExternalShopID, Credentials: creds,
		})
		return items(run.Workspace, store.ID, listings, clock), err
	}
	return jobs.NewHandler(jobs.Job[model.CatalogSyncRun, model.Store, []model.CatalogItem]{
		Event: Task.EventType, Noun: "sync", External: "platform", Refused: ReasonPlatformRefused,
		// A sync only reads from the platform: stopped midway, nothing
		// outside changed, and nothing is recorded.
		Begin: row.Begin, Call: call, End: row.End, Stop: row.Stop,
	}, uow, clock, log)
}

// prepare is step 1: the sync's store.
func prepare(ctx context.Context, tx ports.Tx, _ *slog.Logger, cs model.CatalogSync) (model.Store, string, error) {
	store, err := tx.Stores().Get(ctx, cs.StoreID)
	if domain.IsCode(err, domain.CodeNotFound) {
		return store, ReasonStoreNotFound, nil
	}
	return store, "", err
}

// record is step 3 on success.
func record(ctx context.Context, tx ports.Tx, log *slog.Logger, cs model.CatalogSync, items []model.CatalogItem, now time.Time) error {
	if len(items) > 0 {
		if err := ports.Repository[ports.SyncRepository](tx).UpsertItems(ctx, items); err != nil {
			return err
		}
	}
	cs.Status, cs.ItemsSynced, cs.Reason, cs.UpdatedAt = model.TaskSucceeded, len(items), "", now
	log.Info("catalog synced", "items", len(items))
	return ports.Repository[ports.SyncRepository](tx).Update(ctx, cs)
}

// items turns the platform's listings into catalogue rows. A listing the
// platform reports twice is stored once (the last report wins), so
// ItemsSynced counts distinct listings.
func items(ws, storeID uuid.UUID, listings []ports.CatalogListing, clock ports.Clock) []model.CatalogItem {
	now := clock.Now()
	out := make([]model.CatalogItem, 0, len(listings))
	at := make(map[string]int, len(listings))
	for _, l := range listings {
		item := model.CatalogItem{
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
