package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type idempotencyRepo struct{ t *tx }

var _ ports.IdempotencyStore = idempotencyRepo{}

// idemRow is a committed record and its version, so a delete staged by one
// transaction cannot remove the record another one put in its place.
type idemRow struct {
	record  model.IdempotencyRecord
	version int64
}

// Claim never waits: a scope another open transaction holds is
// CodeIdempotencyInProgress at once. A record expires at its ExpiresAt,
// judged at rec.CreatedAt (the request's time from the application clock),
// or the wall clock when unset, as the PostgreSQL adapter does.
func (r idempotencyRepo) Claim(_ context.Context, rec model.IdempotencyRecord) (*model.IdempotencyRecord, error) {
	t := r.t
	if err := t.lockOwn("idempotency record", rec.Scope.WorkspaceID); err != nil {
		return nil, err
	}
	defer t.db.mu.Unlock()
	scope := rec.Scope
	now := rec.CreatedAt
	if now.IsZero() {
		now = time.Now()
	}

	if own, ok := t.claims[scope]; ok {
		if own.Status == model.IdempotencyCompleted {
			return ptr(copyRecord(own)), nil
		}
		return nil, inProgress()
	}
	// As in PostgreSQL, a live committed record decides first: a completed
	// one is replayed whatever other transactions do (replays hold
	// nothing). Only a scope without one can have a holder.
	if row, ok := t.db.idem[scope]; ok && !r.deletedLocked(scope, row) && row.record.ExpiresAt.After(now) {
		if row.record.Status != model.IdempotencyCompleted {
			// Committed but never completed: a use case broke the rule that
			// a committed record is completed. Keep the scope closed.
			return nil, inProgress()
		}
		return ptr(copyRecord(row.record)), nil
	}
	if holder := t.db.claims[scope]; holder != nil {
		return nil, inProgress()
	}

	rec.Status = model.IdempotencyInProgress
	rec.Response = model.SavedResponse{}
	rec.CompletedAt = time.Time{}
	t.claims[scope] = copyRecord(rec)
	t.db.claims[scope] = t
	return nil, nil
}

func (r idempotencyRepo) Complete(_ context.Context, scope model.IdempotencyScope, resp model.SavedResponse, at time.Time) error {
	t := r.t
	return t.inLock(func() error {
		rec, ok := t.claims[scope]
		if !ok || rec.Status != model.IdempotencyInProgress {
			// No claim, or one this transaction already completed.
			return domain.Errorf(domain.CodeNotFound, "this transaction holds no idempotency claim for the scope")
		}
		rec.Status = model.IdempotencyCompleted
		rec.Response = resp
		rec.CompletedAt = at
		t.claims[scope] = copyRecord(rec)
		return nil
	})
}

// DeleteExpired removes the committed records of this workspace that expired
// before now, those that expired first first.
func (r idempotencyRepo) DeleteExpired(_ context.Context, now time.Time, limit int) (int, error) {
	t := r.t
	now = orNow(now)
	return inLock(t, func() (int, error) {
		var expired []idemRow
		for scope, row := range t.db.idem {
			if scope.WorkspaceID == t.workspace && row.record.ExpiresAt.Before(now) && !r.deletedLocked(scope, row) {
				expired = append(expired, row)
			}
		}
		slices.SortFunc(expired, func(a, b idemRow) int {
			return cmp.Or(a.record.ExpiresAt.Compare(b.record.ExpiresAt), cmp.Compare(a.version, b.version))
		})
		expired = expired[:min(len(expired), max(limit, 0))]
		for _, row := range expired {
			t.deletes[row.record.Scope] = row.version
		}
		return len(expired), nil
	})
}

// deletedLocked reports whether this tx already deleted row.
func (r idempotencyRepo) deletedLocked(scope model.IdempotencyScope, row idemRow) bool {
	version, ok := r.t.deletes[scope]
	return ok && version == row.version
}

func inProgress() error {
	return domain.Errorf(domain.CodeIdempotencyInProgress, "another transaction is executing this request")
}

func ptr[T any](v T) *T { return &v }
