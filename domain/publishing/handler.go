package publishing

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on a publication (and its operation) that failed. They
// are shown to users and carry nothing of the credentials.
const (
	ReasonStoreNotFound   = "the store no longer exists"
	ReasonProductNotFound = "the product no longer exists"
	ReasonPlatformRefused = "the platform refused the listing"
)

// PublishHandler puts the product's listing for one listing.publish
// message (the lifecycle is jobs.Job): the platform holds one listing per
// shop and SKU (the product's id), created by the product's first
// publication to the store and replaced by each later one, which starts
// only once the one before it ended (PublishRoute). The job's request token (derived from the publish
// request; the publication id for a job that has none,
// domain/model/request_token.go) goes to the platform, so a redelivered
// message (or one whose first delivery died after the platform acted, or
// whose recording transaction failed), or a publish request executed again
// after its first commit was lost, never creates a second listing.
//
//  1. a publication whose store or product is gone fails.
//  2. open the store's credentials and call CreateListing for the SKU.
//  3. record the listing id: publication and operation succeeded.
//
// Which draft is published: the product as it is when the worker reads it.
// Publication.ProductRevision stays the revision the user asked to publish
// (what the API answered); if the draft moved on since, the newer draft is
// sent, as the user's latest intent, and the log records both revisions.
// Should the draft change between two attempts after the platform already
// created the listing, the platform refuses the token with CodeConflict
// naming the listing it created; the worker records that listing, so the
// product is still listed once (with the content of the attempt that
// created it). The store's status is not checked again here: Publish
// required it verified, and the platform judges the credentials it is sent.
type PublishHandler = jobs.Handler[model.ListingPublish, work, string]

// NewPublishHandler builds the handler; log may be nil.
func NewPublishHandler(uow ports.UnitOfWork, gateway ports.PlatformGateway, sealer ports.CredentialSealer, clock ports.Clock, log *slog.Logger) *PublishHandler {
	row := jobs.OnRow[model.ListingPublish, model.Publication, model.TaskStatus, work, string]{
		Task: Task.TaskRow, Prepare: prepare, Record: record,
	}
	call := func(ctx context.Context, log *slog.Logger, run jobs.Run[model.ListingPublish], w work) (string, error) {
		log = log.With("store", w.store.ID, "product", w.product.ID)
		creds, err := stores.Credentials(sealer, w.store, log)
		if err != nil {
			return "", err
		}
		res, err := gateway.CreateListing(ctx, ports.CreateListingRequest{
			RequestToken: run.Job.TokenOr(w.pub.ID), Platform: w.store.Platform, ExternalShopID: w.store.ExternalShopID,
			SKU: w.product.ID.String(), Credentials: creds, Title: w.product.Title, Description: w.product.Description,
			PriceMinor: w.product.PriceMinor, Currency: w.product.Currency,
		})
		if id, ok := listedBefore(err); ok {
			log.Warn("the draft changed between attempts; the platform kept the listing an earlier attempt created", "listing", id)
			return id, nil
		}
		return res.ExternalListingID, err
	}
	return jobs.NewHandler(jobs.Job[model.ListingPublish, work, string]{
		Event: Task.EventType, Noun: "publication", External: "platform", Refused: ReasonPlatformRefused,
		Valid: func(j model.ListingPublish) bool { return j.ProductRevision > 0 },
		Begin: row.Begin, Call: call, End: row.End,
	}, uow, clock, log)
}

// work is what step 1 hands step 2.
type work struct {
	pub     model.Publication
	store   model.Store
	product model.Product
}

// prepare is step 1: the publication's store and product.
func prepare(ctx context.Context, tx ports.Tx, log *slog.Logger, pub model.Publication) (work, string, error) {
	w := work{pub: pub}
	var err error
	if w.store, err = tx.Stores().Get(ctx, pub.StoreID); domain.IsCode(err, domain.CodeNotFound) {
		return w, ReasonStoreNotFound, nil
	} else if err != nil {
		return w, "", err
	}
	if w.product, err = tx.Products().Get(ctx, pub.ProductID); domain.IsCode(err, domain.CodeNotFound) {
		return w, ReasonProductNotFound, nil
	} else if err != nil {
		return w, "", err
	}
	if w.product.Revision != pub.ProductRevision {
		log.Info("the draft moved on since publish was requested; publishing the current draft",
			"requested_revision", pub.ProductRevision, "current_revision", w.product.Revision)
	}
	return w, "", nil
}

// record is step 3 on success: the listing's id.
func record(ctx context.Context, tx ports.Tx, log *slog.Logger, pub model.Publication, listingID string, now time.Time) error {
	pub.Status, pub.ExternalListingID, pub.Reason, pub.UpdatedAt = model.TaskSucceeded, listingID, "", now
	log.Info("listing created", "listing", listingID)
	return ports.Repository[ports.PublicationRepository](tx).Update(ctx, pub)
}

// listedBefore recognises the platform refusing our token because an
// earlier attempt of this publication created a listing with other
// content: the token is the publication's own (its request's), so that
// listing is ours.
func listedBefore(err error) (string, bool) {
	var de *domain.Error
	if errors.As(err, &de) && de.Code == domain.CodeConflict && de.ResourceID != "" {
		return de.ResourceID, true
	}
	return "", false
}
