package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Retention implements ports.Retention with the statements of
// retention_sql.go, as the application role.
type Retention struct {
	db  bun.IDB
	uow *UnitOfWork
}

var _ ports.Retention = (*Retention)(nil)

// NewRetention returns the retention of db, connected as the application
// role, deleting through uow (row-level security).
func NewRetention(db bun.IDB, uow *UnitOfWork) *Retention { return &Retention{db: db, uow: uow} }

// WorkspacesWithExpired implements ports.Retention.
func (r *Retention) WorkspacesWithExpired(ctx context.Context, kind model.Expiring, before time.Time, limit int) ([]uuid.UUID, error) {
	if _, ok := deleteExpired[kind]; !ok && kind != model.ExpiringMediaUploads {
		return nil, domain.Errorf(domain.CodeValidation, "no retention for %q", kind)
	}
	if limit <= 0 {
		return nil, nil
	}
	var ids []uuid.UUID
	if err := r.db.NewRaw(selectExpiredWorkspacesOf, string(kind), before, limit).Scan(ctx, &ids); err != nil {
		return nil, mapError(err, "workspace")
	}
	return ids, nil
}

// DeleteExpired implements ports.Retention.
func (r *Retention) DeleteExpired(ctx context.Context, workspace uuid.UUID, kind model.Expiring, before time.Time, limit int) (int, error) {
	stmt, ok := deleteExpired[kind]
	if !ok {
		return 0, domain.Errorf(domain.CodeValidation, "no retention for %q", kind)
	}
	if limit <= 0 {
		return 0, nil
	}
	var n int
	err := r.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		res, err := tx.(*Tx).db.ExecContext(ctx, stmt, workspace, before, limit)
		n, err = affected(res, err, string(kind))
		return err
	})
	return n, err
}
