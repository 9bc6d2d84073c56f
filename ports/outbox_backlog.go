package ports

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// OutboxBacklog tells operators, without any workspace context and without
// reading rows, how much outbox work each workspace holds. Like
// OutboxDiscovery it is a narrow cross-workspace means: ids and
// counts only; the events themselves are read workspace by workspace in a
// unit of work, under row-level security.
type OutboxBacklog interface {
	// Backlog returns, in id order, up to limit workspaces whose id is
	// greater than after (uuid.Nil: from the start) that hold pending,
	// dispatching or dead-lettered events, with their counts and the age at
	// now of their oldest due event (0 when none is due). after is the
	// caller's cursor for the next page.
	Backlog(ctx context.Context, now time.Time, after uuid.UUID, limit int) ([]WorkspaceBacklog, error)
}

// WorkspaceBacklog is one workspace's outbox work that is not done yet.
type WorkspaceBacklog struct {
	Workspace    uuid.UUID
	Pending      int64
	Dispatching  int64
	DeadLetter   int64
	OldestDueAge time.Duration
}
