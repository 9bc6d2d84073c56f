package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// ParkedEvent appends an event for destination ("" for none) to workspace,
// claims it at `at` and parks it until `until` for wait, as a worker does
// with a job that must wait (ports.JobWaits): pending again, with wait's
// kind and destination, its last error wait.Reason. The workspace must
// have no other due event at `at`, and until must come after it.
func ParkedEvent(t testing.TB, uow ports.UnitOfWork, workspace uuid.UUID, at time.Time, destination string, until time.Time, wait model.JobWait) model.OutboxEvent {
	t.Helper()
	e := newEvent(t, workspace, at)
	e.Destination = destination
	err := uow.Transact(context.Background(), workspace, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Outbox().Append(ctx, e); err != nil {
			return err
		}
		claimed, err := tx.OutboxDispatch().ClaimDue(ctx, "testkit", at, time.Minute, 1, 10)
		if err != nil {
			return err
		}
		if len(claimed.Events) != 1 || claimed.Events[0].ID != e.ID {
			t.Fatalf("claimed %d events, want the new one only", len(claimed.Events))
		}
		parked, err := tx.Outbox().Defer(ctx, e.ID, until, 1, wait)
		if err == nil && !parked {
			t.Fatalf("event %s was not parked", e.ID)
		}
		return err
	})
	if err != nil {
		t.Fatalf("park event: %v", err)
	}
	e.NextAttemptAt, e.LastError, e.JobAttempts, e.WaitKind, e.WaitedFor = until, wait.Reason, 1, wait.Kind, wait.For
	return e
}
