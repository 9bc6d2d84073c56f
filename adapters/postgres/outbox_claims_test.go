package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// OutboxClaims sends set_config and the statement as one batch: the claim
// sees only its workspace's events, the workspace context ends with the
// call (the next statement on the same connection sees nothing), and the
// mark is fenced by owner as in a unit of work.
func TestOutboxClaimsAreScopedToTheirWorkspaceAndLeaveNoContextBehind(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	// One connection: whatever a call leaves on it, the next one sees.
	pool := openPool(t, db.AppDSN, 1)
	uow := postgres.NewUnitOfWork(pool)
	claims := postgres.NewOutboxClaims(uow)

	a := seedWorkspace(t, uow, t0.Add(48*time.Hour)) // one pending event each, due at t0
	b := seedWorkspace(t, uow, t0.Add(48*time.Hour))
	var more []uuid.UUID
	transact(t, uow, a, func(ctx context.Context, tx ports.Tx) error {
		for range 4 {
			ev, err := model.NewOutboxEvent(newID(t), a, "test.event", "thing", uuid.New(), map[string]int{"n": 1}, t0)
			if err != nil {
				return err
			}
			more = append(more, ev.ID)
			if err := tx.Outbox().Append(ctx, ev); err != nil {
				return err
			}
		}
		return nil
	})

	now := t0.Add(time.Hour)
	claim, err := claims.ClaimDue(ctx, a, "owner-a", now, time.Minute, 100, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(claim.Events) != 5 {
		t.Fatalf("claimed %d events of workspace a, want 5", len(claim.Events))
	}
	ids := make([]uuid.UUID, len(claim.Events))
	for i, e := range claim.Events {
		ids[i] = e.ID
		if e.WorkspaceID != a || e.Status != model.OutboxDispatching || e.LockedBy != "owner-a" {
			t.Errorf("claimed %+v", e)
		}
	}

	var setting string
	var visible int
	if err := pool.QueryRowContext(ctx, `SELECT coalesce(current_setting('app.workspace_id', true), '')`).Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRowContext(ctx, `SELECT count(*) FROM outbox_events`).Scan(&visible); err != nil {
		t.Fatal(err)
	}
	if setting != "" || visible != 0 {
		t.Fatalf("after a claim the connection has app.workspace_id %q and sees %d events; want none", setting, visible)
	}

	// Fenced: another owner, or the right owner naming another workspace,
	// changes nothing.
	if n, err := claims.MarkDispatched(ctx, a, "owner-b", ids, now); err != nil || n != 0 {
		t.Fatalf("mark by another owner: %d, %v", n, err)
	}
	if n, err := claims.MarkDispatched(ctx, b, "owner-a", ids, now); err != nil || n != 0 {
		t.Fatalf("mark in another workspace: %d, %v", n, err)
	}
	if n, err := claims.MarkDispatched(ctx, a, "owner-a", ids, now); err != nil || n != len(ids) {
		t.Fatalf("mark: %d, %v; want %d", n, err, len(ids))
	}
	if n, err := claims.MarkDispatched(ctx, a, "owner-a", ids, now); err != nil || n != 0 {
		t.Fatalf("second mark: %d, %v", n, err)
	}
	// b's event is untouched and still claimable, by b's claim only.
	claim, err = claims.ClaimDue(ctx, b, "owner-a", now, time.Minute, 100, 10)
	if err != nil || len(claim.Events) != 1 || claim.Events[0].WorkspaceID != b {
		t.Fatalf("claim of b: %+v, %v", claim, err)
	}
	if _, err := claims.ClaimDue(ctx, uuid.Nil, "owner-a", now, time.Minute, 100, 10); !domain.IsCode(err, domain.CodeValidation) {
		t.Fatalf("a claim without a workspace: %v", err)
	}
}

// A lease lost to another owner while the batch was with the broker: the
// stale owner's mark changes nothing, the new owner's claim stands, and the
// takeover counted an attempt.
func TestOutboxClaimsFenceAStaleMarkAfterATakeover(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	uow := newUoW(db)
	claims := postgres.NewOutboxClaims(uow)
	ws := seedWorkspace(t, uow, t0.Add(48*time.Hour))

	lease := time.Minute
	first, err := claims.ClaimDue(ctx, ws, "stale", t0.Add(time.Hour), lease, 100, 10)
	if err != nil || len(first.Events) != 1 {
		t.Fatalf("claim: %+v, %v", first, err)
	}
	later := t0.Add(time.Hour + 2*lease)
	second, err := claims.ClaimDue(ctx, ws, "fresh", later, lease, 100, 10)
	if err != nil || len(second.TakenOver) != 1 || second.TakenOver[0].ID != first.Events[0].ID {
		t.Fatalf("takeover: %+v, %v", second, err)
	}
	if got := second.TakenOver[0]; got.AttemptCount != 1 || got.LockedBy != "fresh" {
		t.Fatalf("taken over: %+v", got)
	}
	id := []uuid.UUID{first.Events[0].ID}
	if n, err := claims.MarkDispatched(ctx, ws, "stale", id, later); err != nil || n != 0 {
		t.Fatalf("stale mark: %d, %v", n, err)
	}
	if n, err := claims.MarkDispatched(ctx, ws, "fresh", id, later); err != nil || n != 1 {
		t.Fatalf("fresh mark: %d, %v", n, err)
	}
}
