package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// ProductRepository stores product drafts with optimistic concurrency.
// Create (Resources) writes the Revision as given, normally 1.
type ProductRepository interface {
	Resources[model.Product]
	// Update saves title, description, price, currency, media ids and
	// updated_at of p only if the stored revision equals expectedRevision,
	// and sets the revision to expectedRevision+1 (p.Revision is ignored).
	// Returns the saved product. domain.CodePreconditionFailed if the stored
	// revision differs (nothing changes), domain.CodeNotFound if absent.
	Update(ctx context.Context, p model.Product, expectedRevision int) (model.Product, error)
	// ForgetMedia takes media ids that no longer exist out of every
	// product of the workspace naming any of them, keeping the order of
	// the others, and, as a save does, bumps each such product's revision
	// and sets its updated_at to at: an editor holding the previous
	// revision is told the draft changed. Says how many products changed.
	ForgetMedia(ctx context.Context, ids []uuid.UUID, at time.Time) (int, error)
}
