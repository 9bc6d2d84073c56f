package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// Retention removes finished records that have had their time (see
// model.Expiring for what may go and what never does). Optional: the
// embedded memory store keeps everything until the process exits.
type Retention interface {
	// WorkspacesWithExpired returns up to limit workspaces that hold rows
	// of kind finished before `before`. Ids only, without any workspace
	// context (PostgreSQL: a SECURITY DEFINER function, as for the
	// outbox's discovery).
	WorkspacesWithExpired(ctx context.Context, kind model.Expiring, before time.Time, limit int) ([]uuid.UUID, error)
	// DeleteExpired deletes up to limit rows of kind finished before
	// `before` in workspace, oldest first, in a transaction of its own
	// under row-level security, and says how many. Rows another
	// transaction holds are skipped.
	DeleteExpired(ctx context.Context, workspace uuid.UUID, kind model.Expiring, before time.Time, limit int) (int, error)
}
