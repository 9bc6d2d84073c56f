package ports

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// MaterialTransferRepository stores transfers and their items. Of
// Resources, Create writes the transfer with its items, Get reads it with
// its items ordered by index, and List loads no items.
type MaterialTransferRepository interface {
	Resources[model.MaterialTransfer]
	// UpdateStatus replaces status, reason and updated_at;
	// domain.CodeNotFound if absent.
	UpdateStatus(ctx context.Context, t model.MaterialTransfer) error
	// MarkItemDone records that item index of transfer id is stored under
	// objectKey; domain.CodeNotFound if there is no such item. Marking a done
	// item again changes nothing.
	MarkItemDone(ctx context.Context, id uuid.UUID, index int, objectKey string, size int64) error
}
