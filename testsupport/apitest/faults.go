package apitest

import (
	"context"

	"github.com/google/uuid"
	"go.uber.org/fx"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// BeforeAppend runs inside the business transaction, right before the outbox
// event is written (after the idempotency claim and the store). Returning an
// error fails the transaction there.
type BeforeAppend func(ctx context.Context, events []model.OutboxEvent) error

// WithBeforeAppend decorates the unit of work so tests can block or fail a
// transaction midway, the way a crash or a lost connection would.
func WithBeforeAppend(hook BeforeAppend) fx.Option {
	return fx.Decorate(func(uow ports.UnitOfWork) ports.UnitOfWork {
		return hookedUoW{UnitOfWork: uow, hook: hook}
	})
}

type hookedUoW struct {
	ports.UnitOfWork
	hook BeforeAppend
}

func (u hookedUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	return u.UnitOfWork.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		return fn(ctx, hookedTx{Tx: tx, hook: u.hook})
	})
}

type hookedTx struct {
	ports.Tx
	hook BeforeAppend
}

func (t hookedTx) Outbox() ports.Outbox { return hookedOutbox{Outbox: t.Tx.Outbox(), hook: t.hook} }

type hookedOutbox struct {
	ports.Outbox
	hook BeforeAppend
}

func (o hookedOutbox) Append(ctx context.Context, events ...model.OutboxEvent) error {
	if err := o.hook(ctx, events); err != nil {
		return err
	}
	return o.Outbox.Append(ctx, events...)
}
