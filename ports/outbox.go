package ports

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// Outbox records events in the business transaction, bound to one
// transaction of one workspace.
type Outbox interface {
	// Append writes events as pending in this transaction. Each event must
	// belong to the transaction's workspace (domain.CodeForbidden otherwise);
	// an event whose payload fails
	// domain.CheckPayloadSafe is refused with domain.CodeUnsafePayload. An id
	// that already exists is domain.CodeConflict.
	Append(ctx context.Context, events ...domain.OutboxEvent) error

	// Get returns one event of this workspace, domain.CodeNotFound otherwise.
	Get(ctx context.Context, id uuid.UUID) (domain.OutboxEvent, error)

	// List returns this workspace's events, oldest first, optionally only
	// those with status (empty: all), at most limit of them (limit <= 0
	// returns none).
	List(ctx context.Context, status domain.OutboxStatus, limit int) ([]domain.OutboxEvent, error)
}
