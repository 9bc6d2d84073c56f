package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// UnitOfWork runs functions in transactions over a DB.
type UnitOfWork struct {
	db *DB
}

var _ ports.UnitOfWork = (*UnitOfWork)(nil)

// NewUnitOfWork returns a unit of work over db.
func NewUnitOfWork(db *DB) *UnitOfWork {
	return &UnitOfWork{db: db}
}

// Transact runs fn in a transaction of workspace. Its writes are staged and
// published at once when fn returns nil. When fn returns an error they are
// discarded and the error is returned unchanged; when fn panics they are
// discarded and the panic continues, as bun's RunInTx does for the
// PostgreSQL adapter. Commit cannot fail in memory.
//
// A transaction without a workspace is refused (CodeValidation): under
// row-level security it could neither read nor write anything.
func (u *UnitOfWork) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	if workspace == uuid.Nil {
		return domain.Errorf(domain.CodeValidation, "a transaction needs a workspace")
	}
	if err := ctx.Err(); err != nil {
		return domain.Wrap(domain.CodeUnavailable, err, "transaction not started")
	}
	t := newTx(u.db, workspace)
	committed := false
	defer func() {
		if !committed {
			t.rollback()
		}
	}()
	if err := fn(ctx, t); err != nil {
		return err
	}
	t.commit()
	committed = true
	return nil
}
