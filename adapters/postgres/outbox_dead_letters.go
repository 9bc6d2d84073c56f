package postgres

import (
	"context"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// ListDeadLetters implements ports.Outbox: the one list query of every
// resource (listNewest), over the workspace's dead letters.
func (o *Outbox) ListDeadLetters(ctx context.Context, q ports.ListQuery) ([]model.OutboxEvent, error) {
	return listNewest(ctx, o.db, o.workspace, ports.ListQuery{StartingAfter: q.StartingAfter, Limit: q.Limit},
		"outbox event", plain((*outboxRow).domain), eq("status", string(model.OutboxDeadLetter)))
}
