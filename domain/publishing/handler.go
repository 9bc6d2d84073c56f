package publishing

import (
	"context"
	"errors"
	"log/slog"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/platformerr"
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

// PublishHandler creates the listing for one listing.publish message. It
// is re-entrant: the publication's state says whether the work is done, and
// the publication id is the platform request token, so a redelivered
// message (or one whose first delivery died after the platform acted, or
// whose recording transaction failed) never creates a second listing.
//
// The steps, each its own transaction so nothing is held open while the
// platform is called:
//
//  1. read the operation and the publication; either finished means a
//     duplicate delivery: done. Read the store and the product; if either
//     is gone the publication fails. Otherwise publication and operation
//     become running.
//  2. open the store's credentials and call CreateListing, outside any
//     transaction.
//  3. check again that the publication is unfinished, then record the
//     listing id: publication and operation succeeded.
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
//
// Errors: a transport failure (CodeUnavailable), a cancelled context, a
// credential that cannot be opened, or a failure to record the outcome are
// returned as they are, so the message is delivered again; the task stays
// running. A message that can never succeed (not this event type, a
// payload that does not decode, an operation or publication that does not
// exist or does not match) is CodeValidation or CodeNotFound. A permanent
// platform error ends the publication failed, with a sanitized reason, and
// returns nil.
type PublishHandler struct {
	uow     ports.UnitOfWork
	gateway ports.PlatformGateway
	sealer  ports.CredentialSealer
	clock   ports.Clock
	log     *slog.Logger
}

var _ ports.MessageHandler = (*PublishHandler)(nil)

// NewPublishHandler builds the handler; log may be nil.
func NewPublishHandler(uow ports.UnitOfWork, gateway ports.PlatformGateway, sealer ports.CredentialSealer, clock ports.Clock, log *slog.Logger) *PublishHandler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &PublishHandler{uow: uow, gateway: gateway, sealer: sealer, clock: clock, log: log.With("handler", domain.EventListingPublish)}
}

// work is what step 1 hands step 2.
type work struct {
	pub     domain.Publication
	store   domain.Store
	product domain.Product
}

// Handle processes one delivery; see PublishHandler.
func (h *PublishHandler) Handle(ctx context.Context, msg ports.Message) error {
	job, err := decode(msg)
	if err != nil {
		return err
	}
	log := h.log.With("message", msg.ID, "workspace", msg.WorkspaceID, "operation", job.OperationID, "publication", job.PublicationID)

	w, proceed, err := h.start(ctx, msg.WorkspaceID, job, log)
	if err != nil || !proceed {
		return err
	}
	log = log.With("store", w.store.ID, "product", w.product.ID)

	creds, err := stores.OpenCredentials(h.sealer, w.store)
	if err != nil {
		log.Error("store credentials cannot be opened", "error", domain.SanitizeError(err))
		return err
	}
	res, err := h.gateway.CreateListing(ctx, ports.CreateListingRequest{
		RequestToken:   w.pub.ID.String(),
		Platform:       w.store.Platform,
		ExternalShopID: w.store.ExternalShopID,
		Credentials:    creds,
		Title:          w.product.Title,
		Description:    w.product.Description,
		PriceMinor:     w.product.PriceMinor,
		Currency:       w.product.Currency,
	})
	if id, ok := listedBefore(err); ok {
		log.Warn("the draft changed between attempts; the platform kept the listing an earlier attempt created", "listing", id)
		res, err = ports.CreateListingResult{ExternalListingID: id}, nil
	}
	if err != nil {
		if platformerr.Retryable(ctx, err) {
			log.Warn("platform unavailable, publication will be retried", "error", domain.SanitizeError(err))
			return err
		}
		log.Error("platform refused the listing", "error", domain.SanitizeError(err))
		return h.finish(ctx, msg.WorkspaceID, job, "", platformerr.Reason(ReasonPlatformRefused, err), log)
	}
	return h.finish(ctx, msg.WorkspaceID, job, res.ExternalListingID, "", log)
}

// decode reads and checks the payload.
func decode(msg ports.Message) (domain.ListingPublish, error) {
	return jobs.Decode(msg, domain.EventListingPublish, func(j domain.ListingPublish) bool {
		return j.PublicationID != uuid.Nil && j.OperationID != uuid.Nil && j.ProductRevision > 0
	})
}

// start is step 1. proceed is false when there is nothing (more) to do.
func (h *PublishHandler) start(ctx context.Context, ws uuid.UUID, job domain.ListingPublish, log *slog.Logger) (w work, proceed bool, err error) {
	err = jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		proceed = false
		op, pub, err := Task.Load(ctx, tx, job.OperationID, job.PublicationID)
		if err != nil {
			return err
		}
		if Task.Finished(op, pub) {
			log.Info("publication already finished: duplicate delivery", "status", pub.Status)
			return nil
		}
		store, err := tx.Stores().Get(ctx, pub.StoreID)
		if domain.IsCode(err, domain.CodeNotFound) {
			log.Warn("store not found, publication failed")
			return Task.End(ctx, tx, op, pub, ReasonStoreNotFound, h.clock.Now())
		}
		if err != nil {
			return err
		}
		product, err := tx.Products().Get(ctx, pub.ProductID)
		if domain.IsCode(err, domain.CodeNotFound) {
			log.Warn("product not found, publication failed")
			return Task.End(ctx, tx, op, pub, ReasonProductNotFound, h.clock.Now())
		}
		if err != nil {
			return err
		}
		if product.Revision != pub.ProductRevision {
			log.Info("the draft moved on since publish was requested; publishing the current draft",
				"requested_revision", pub.ProductRevision, "current_revision", product.Revision)
		}
		w, proceed = work{pub: pub, store: store, product: product}, true
		return Task.Start(ctx, tx, op, pub, h.clock.Now())
	})
	if err != nil {
		return work{}, false, err
	}
	return w, proceed, nil
}

// finish is step 3: listingID on success, reason on a permanent failure.
func (h *PublishHandler) finish(ctx context.Context, ws uuid.UUID, job domain.ListingPublish, listingID, reason string, log *slog.Logger) error {
	return jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		op, pub, err := Task.Load(ctx, tx, job.OperationID, job.PublicationID)
		if err != nil {
			return err
		}
		if Task.Finished(op, pub) {
			log.Info("publication finished by a concurrent delivery", "status", pub.Status)
			return nil
		}
		if reason != "" {
			log.Info("publication failed", "reason", reason)
			return Task.End(ctx, tx, op, pub, reason, h.clock.Now())
		}
		now := h.clock.Now()
		pub.Status, pub.ExternalListingID, pub.Reason, pub.UpdatedAt = domain.TaskSucceeded, listingID, "", now
		op.Succeed(now)
		if err := tx.Publications().Update(ctx, pub); err != nil {
			return err
		}
		log.Info("listing created", "listing", listingID)
		return tx.Operations().Update(ctx, op)
	})
}

// listedBefore recognises the platform refusing our token because an
// earlier attempt of this publication created a listing with other
// content: the token is the publication's own, so that listing is ours.
func listedBefore(err error) (string, bool) {
	var de *domain.Error
	if errors.As(err, &de) && de.Code == domain.CodeConflict && de.ResourceID != "" {
		return de.ResourceID, true
	}
	return "", false
}
