// Package products holds the use cases of product drafts. Saving a draft
// starts no asynchronous work, so it is neither idempotent nor evented
// (only requests that start background work are): concurrent editors are kept apart by the product's revision,
// which every save must name (HTTP If-Match) and bumps.
package products

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Service creates, reads and saves product drafts.
type Service struct {
	uow   ports.UnitOfWork
	clock ports.Clock
	ids   ports.IDGenerator
}

// NewService builds the service.
func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{uow: uow, clock: clock, ids: ids}
}

// Create writes a new product at revision 1 in the caller's workspace.
//
// Errors: domain.CodeValidation for a bad draft (title 1-200 characters,
// description at most 10,000, price >= 0, currency three upper-case
// letters, at most 20 distinct media ids); domain.CodeReferenceNotFound
// (Field media_ids[i]) for a media id the workspace has no media of; the
// unit of work's errors.
func (s *Service) Create(ctx context.Context, p model.Principal, d Draft) (model.Product, error) {
	d = d.normalize()
	if err := d.validate(); err != nil {
		return model.Product{}, err
	}
	product := d.product(s.ids.NewID(), p.WorkspaceID, s.clock.Now())
	product.Revision, product.CreatedAt = 1, product.UpdatedAt
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		if err := requireMedia(ctx, tx, d.MediaIDs); err != nil {
			return err
		}
		return tx.Products().Create(ctx, product)
	})
	if err != nil {
		return model.Product{}, err
	}
	return product, nil
}

// Get reads one product of the caller's workspace.
//
// Errors: domain.CodeNotFound if there is none (products of other
// workspaces included).
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.Product, error) {
	return ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.Product, error) {
		return tx.Products().Get(ctx, id)
	})
}

// Update saves d over the product if its stored revision is still
// expectedRevision (the revision the editor started from), and returns the
// product at the next revision. The check and the write are one statement
// of the repository, so of two saves from the same revision exactly one
// wins.
//
// Errors: domain.CodeValidation and domain.CodeReferenceNotFound for a bad
// draft (as Create), domain.CodeNotFound if there is no such product, and
// domain.CodePreconditionFailed if the product was saved since
// expectedRevision; in both cases nothing changes.
func (s *Service) Update(ctx context.Context, p model.Principal, id uuid.UUID, expectedRevision int, d Draft) (model.Product, error) {
	d = d.normalize()
	if err := d.validate(); err != nil {
		return model.Product{}, err
	}
	saved, err := ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.Product, error) {
		if err := requireMedia(ctx, tx, d.MediaIDs); err != nil {
			return model.Product{}, err
		}
		return tx.Products().Update(ctx, d.product(id, p.WorkspaceID, s.clock.Now()), expectedRevision)
	})
	if err != nil {
		return model.Product{}, err
	}
	return saved, nil
}

// requireMedia checks, in the draft's transaction, that every id names a
// media record of the workspace. The one media ever deleted is one never
// uploaded, past ONCE_MEDIA_UPLOAD_EXPIRY (media.UploadExpirer), which
// takes it out of the drafts naming it too; a save racing that expiry may
// keep the id (see UploadExpirer), and its next save is refused here.
func requireMedia(ctx context.Context, tx ports.Tx, ids []uuid.UUID) error {
	for i, id := range ids {
		_, err := tx.Media().Get(ctx, id)
		if domain.IsCode(err, domain.CodeNotFound) {
			return &domain.Error{Code: domain.CodeReferenceNotFound, Field: fmt.Sprintf("media_ids[%d]", i),
				Message: fmt.Sprintf("media_ids[%d] names no media of this workspace", i)}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
