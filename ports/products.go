package ports

import (
	"context"

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
}
