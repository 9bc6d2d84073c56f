package dispatch

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// MaxAdminBatch bounds what one operator call lists or re-drives by id.
const MaxAdminBatch = 1000

// Admin holds the operators' use cases on dead letters: look at them (the
// last error is already sanitized, the payload holds ids only) and send
// them again once the cause is fixed.
type Admin struct {
	uow    ports.UnitOfWork
	clock  ports.Clock
	signal ports.DispatchSignal
}

// NewAdmin builds the operator use cases. signal may be nil; when set,
// Dispatchers are woken after a re-drive.
func NewAdmin(uow ports.UnitOfWork, clock ports.Clock, signal ports.DispatchSignal) *Admin {
	return &Admin{uow: uow, clock: clock, signal: signal}
}

// ListDeadLetters returns up to limit (100 if <= 0, at most MaxAdminBatch)
// dead-lettered events of workspace, oldest first.
func (a *Admin) ListDeadLetters(ctx context.Context, workspace uuid.UUID, limit int) ([]domain.OutboxEvent, error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxAdminBatch)
	var events []domain.OutboxEvent
	err := a.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		var err error
		events, err = tx.Outbox().List(ctx, domain.OutboxDeadLetter, limit)
		return err
	})
	return events, err
}

// Redrive moves dead-lettered events of workspace back to pending with a
// fresh attempt budget, due now. ids nil re-drives all of the workspace's
// dead letters; a non-nil empty slice re-drives none. Ids that are not dead
// letters are left alone. Returns how many moved; CodeValidation for more
// than MaxAdminBatch ids.
func (a *Admin) Redrive(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error) {
	if ids != nil && len(ids) == 0 {
		return 0, nil
	}
	if len(ids) > MaxAdminBatch {
		return 0, domain.Errorf(domain.CodeValidation, "at most %d events can be re-driven at once", MaxAdminBatch)
	}
	var moved int
	err := a.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		var err error
		moved, err = tx.OutboxDispatch().Redrive(ctx, ids, a.clock.Now())
		return err
	})
	if err == nil && moved > 0 && a.signal != nil {
		a.signal.Committed()
	}
	return moved, err
}
