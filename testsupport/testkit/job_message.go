package testkit

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// JobMessage is the message that delivers the job of operation, read from
// workspace's outbox: a worker runs only a message that is its event as
// written (jobs.Stored), so a test delivers that, not one of its own.
func JobMessage(t testing.TB, uow ports.UnitOfWork, workspace, operation uuid.UUID) ports.Message {
	t.Helper()
	events, err := ports.Query(context.Background(), uow, workspace, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
		return tx.Outbox().List(ctx, "", 1000)
	})
	if err != nil {
		t.Fatalf("testkit: read the outbox: %v", err)
	}
	for _, e := range events {
		if id, ok := model.JobOperationID(e.Payload); ok && id == operation {
			return ports.MessageOf(e)
		}
	}
	t.Fatalf("testkit: no event for operation %s", operation)
	return ports.Message{}
}
