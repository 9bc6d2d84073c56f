package ports

import (
	"context"

	"github.com/oncehq/once/domain/model"
)

// PublicationRepository stores first-publish tasks. Of Resources, Create
// keeps a product at most one publication per store that is not failed:
// otherwise domain.CodeAlreadyPublished with ResourceID = the existing
// publication's id, enforced by the database; domain.CodeConflict if the
// id exists, or if the product or the store is missing or in another
// workspace.
type PublicationRepository interface {
	Resources[model.Publication]
	// Update replaces status, external listing id, reason and updated_at;
	// domain.CodeNotFound if absent. Moving a failed publication out of
	// failed while the product has another publication to the store that
	// is not failed is domain.CodeAlreadyPublished (nothing changes).
	Update(ctx context.Context, p model.Publication) error
}
