package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// OutboxDispatch implements ports.OutboxDispatch for one transaction of one
// workspace. The statements, and why they are shaped so, are in
// outbox_dispatch_sql.go.
type OutboxDispatch struct {
	db        bun.IDB
	workspace uuid.UUID
}

var _ ports.OutboxDispatch = (*OutboxDispatch)(nil)

// claimedRow is an outbox row as the claim returns it, with the time it
// became due (next_attempt_at, or the expired locked_until) and whether it
// was taken over from an expired lease.
type claimedRow struct {
	outboxRow
	DueAt     time.Time `bun:"due_at"`
	TakenOver bool      `bun:"taken_over"`
}

// ClaimDue implements ports.OutboxDispatch.
func (d *OutboxDispatch) ClaimDue(ctx context.Context, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (ports.Claim, error) {
	now, ok, err := checkClaim(owner, now, lease, limit, maxAttempts)
	if !ok {
		return ports.Claim{}, err
	}
	var rows []claimedRow
	err = retryMoved(ctx, d.db, func() error {
		rows = rows[:0]
		err := d.db.NewRaw(claimDueEvents, d.workspace, now, limit, owner, now.Add(lease), maxAttempts, model.LeaseExpiredErrorFormat).Scan(ctx, &rows)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return ports.Claim{}, mapError(err, "outbox event")
	}
	return splitClaim(rows), nil
}

// checkClaim refuses a claim that cannot work and fills in now; ok is
// false when there is nothing to claim or err says why not.
func checkClaim(owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (time.Time, bool, error) {
	switch {
	case limit <= 0:
		return now, false, nil
	case owner == "":
		return now, false, domain.Errorf(domain.CodeValidation, "a claim needs an owner")
	case lease <= 0 || maxAttempts <= 0:
		return now, false, domain.Errorf(domain.CodeValidation, "a claim needs a positive lease and maximum of attempts")
	case now.IsZero():
		now = time.Now()
	}
	return now, true, nil
}

// splitClaim orders claimed rows by due time (RETURNING has no order) and
// splits them into pending events, the taken-over one and dead letters.
func splitClaim(rows []claimedRow) ports.Claim {
	slices.SortFunc(rows, func(a, b claimedRow) int {
		return cmp.Or(a.DueAt.Compare(b.DueAt), slices.Compare(a.ID[:], b.ID[:]))
	})
	var claim ports.Claim
	for i := range rows {
		e := rows[i].domain()
		switch {
		case e.Status == model.OutboxDeadLetter:
			claim.DeadLettered = append(claim.DeadLettered, e.ID)
		case rows[i].TakenOver:
			claim.TakenOver = append(claim.TakenOver, e)
		default:
			claim.Events = append(claim.Events, e)
		}
	}
	return claim
}

// MarkDispatched implements ports.OutboxDispatch.
func (d *OutboxDispatch) MarkDispatched(ctx context.Context, owner string, ids []uuid.UUID, at time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if at.IsZero() {
		at = time.Now()
	}
	return d.exec(ctx, markDispatched, at, d.workspace, pgdialect.Array(uuidStrings(ids)), owner)
}

// Release implements ports.OutboxDispatch.
func (d *OutboxDispatch) Release(ctx context.Context, owner string, id uuid.UUID, nextAttemptAt time.Time, lastError string) (bool, error) {
	if nextAttemptAt.IsZero() {
		nextAttemptAt = time.Now()
	}
	n, err := d.exec(ctx, releaseEvent, nextAttemptAt, strPtr(lastError), d.workspace, id, owner)
	return n == 1, err
}

// Postpone implements ports.OutboxDispatch.
func (d *OutboxDispatch) Postpone(ctx context.Context, owner string, ids []uuid.UUID, nextAttemptAt time.Time, lastError string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if nextAttemptAt.IsZero() {
		nextAttemptAt = time.Now()
	}
	return d.exec(ctx, postponeEvents, nextAttemptAt, strPtr(lastError), d.workspace, bun.In(ids), owner)
}

// DeadLetter implements ports.OutboxDispatch.
func (d *OutboxDispatch) DeadLetter(ctx context.Context, owner string, id uuid.UUID, lastError string) (bool, error) {
	n, err := d.exec(ctx, deadLetterEvent, strPtr(lastError), d.workspace, id, owner)
	return n == 1, err
}

// Redrive implements ports.OutboxDispatch. A nil ids redrives every dead
// letter of the workspace; an empty, non-nil ids redrives none.
func (d *OutboxDispatch) Redrive(ctx context.Context, ids []uuid.UUID, now time.Time) (int, error) {
	if now.IsZero() {
		now = time.Now()
	}
	if ids == nil {
		return d.exec(ctx, redriveAllEvents, now, now, d.workspace)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return d.exec(ctx, redriveEvents, now, now, d.workspace, bun.In(ids))
}

// DeleteDispatchedBefore implements ports.OutboxDispatch.
func (d *OutboxDispatch) DeleteDispatchedBefore(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	return rowsAffected(d.db.ExecContext(ctx, deleteDispatchedBefore, d.workspace, before, limit))
}

// exec runs a statement that changes events' status, which may move them
// between partitions, retrying it if it met a row a concurrent transaction
// moved (moved_rows.go), and returns how many rows it changed.
func (d *OutboxDispatch) exec(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := retryMoved(ctx, d.db, func() error {
		var err error
		n, err = rowsAffected(d.db.ExecContext(ctx, query, args...))
		return err
	})
	return n, err
}

// rowsAffected is affected for a statement about outbox events.
func rowsAffected(res sql.Result, err error) (int, error) { return affected(res, err, "outbox event") }

// affected is how many rows (of what, named in errors) a statement that
// returned res and err changed.
func affected(res sql.Result, err error, what string) (int, error) {
	if err != nil {
		return 0, mapError(err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, mapError(err, what)
	}
	return int(n), nil
}

// OutboxDiscovery implements ports.OutboxDiscovery through the SECURITY
// DEFINER functions of sql/002_outbox_dispatch.sql: without any workspace
// context, and without a privileged pool, the Dispatcher learns which
// workspaces to visit and how many events there are, never the events.
// db must be connected as a role with once_dispatcher (Bootstrap grants it
// to the application role by default).
type OutboxDiscovery struct {
	db bun.IDB
}

var _ ports.OutboxDiscovery = (*OutboxDiscovery)(nil)

// NewOutboxDiscovery returns an OutboxDiscovery on db.
func NewOutboxDiscovery(db bun.IDB) *OutboxDiscovery { return &OutboxDiscovery{db: db} }

// WorkspacesWithDueEvents implements ports.OutboxDiscovery.
func (d *OutboxDiscovery) WorkspacesWithDueEvents(ctx context.Context, now time.Time, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	if now.IsZero() {
		now = time.Now()
	}
	return d.workspaces(ctx, selectDueWorkspaces, limit, now, after, limit)
}

// WorkspacesWithDispatchedBefore implements ports.OutboxDiscovery.
func (d *OutboxDiscovery) WorkspacesWithDispatchedBefore(ctx context.Context, before time.Time, limit int) ([]uuid.UUID, error) {
	return d.workspaces(ctx, selectDispatchedWorkspaces, limit, before, limit)
}

func (d *OutboxDiscovery) workspaces(ctx context.Context, query string, limit int, args ...any) ([]uuid.UUID, error) {
	if limit <= 0 {
		return nil, nil
	}
	var ids []uuid.UUID
	if err := d.db.NewRaw(query, args...).Scan(ctx, &ids); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, mapError(err, "workspace")
	}
	return ids, nil
}

// Stats implements ports.OutboxDiscovery.
func (d *OutboxDiscovery) Stats(ctx context.Context, now time.Time) (ports.OutboxStats, error) {
	if now.IsZero() {
		now = time.Now()
	}
	var rows []struct {
		Status      string     `bun:"status"`
		Events      int64      `bun:"events"`
		OldestDueAt *time.Time `bun:"oldest_due_at"`
	}
	if err := d.db.NewRaw(selectOutboxStats, now).Scan(ctx, &rows); err != nil {
		return ports.OutboxStats{}, mapError(err, "outbox stats")
	}
	stats := ports.OutboxStats{ByStatus: make(map[model.OutboxStatus]int64, len(rows))}
	var oldest time.Time
	for _, r := range rows {
		stats.ByStatus[model.OutboxStatus(r.Status)] = r.Events
		if r.OldestDueAt != nil && (oldest.IsZero() || r.OldestDueAt.Before(oldest)) {
			oldest = *r.OldestDueAt
		}
	}
	if !oldest.IsZero() {
		stats.OldestDueAge = max(now.Sub(oldest), 0)
	}
	return stats, nil
}
