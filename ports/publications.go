package ports

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// PublicationRepository stores publish tasks. A product may have several
// publications to one store, live at once; they form a line in commit
// order (model.Publication.WaitsBehind). Of Resources, Create is
// domain.CodeConflict if the id exists, or if the product or the store is
// missing or in another workspace.
type PublicationRepository interface {
	Resources[model.Publication]
	// LastInLine holds, until the transaction ends, the line of the
	// product's publications to the store (a second transaction calling it
	// for them waits), and returns the last publication in it: the one no
	// other waits behind; uuid.Nil for none. The caller creates the next
	// one naming it, so the line is commit order.
	LastInLine(ctx context.Context, product, store uuid.UUID) (uuid.UUID, error)
	// Update replaces status, external listing id, reason and updated_at;
	// domain.CodeNotFound if absent.
	Update(ctx context.Context, p model.Publication) error
}
