package dispatch

import (
	"context"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// NotifyOnCommit wraps uow so that a transaction that appended outbox events
// calls signal.Committed once it has committed: after Transact returned nil,
// outside the transaction (a NOTIFY inside the business
// transaction would serialize every producer's commit). Rolled-back
// transactions and transactions that appended nothing, or only events held
// by a Relay, signal nothing.
//
// A commit that fails with CodeUnavailable may still have committed; no
// signal is sent then, and the Dispatcher's poll picks the events up.
func NotifyOnCommit(uow ports.UnitOfWork, signal ports.DispatchSignal) ports.UnitOfWork {
	return notifyingUnitOfWork{next: uow, signal: signal}
}

type notifyingUnitOfWork struct {
	next   ports.UnitOfWork
	signal ports.DispatchSignal
}

func (u notifyingUnitOfWork) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	// Atomic because a use case may share its tx between goroutines.
	var appended atomic.Bool
	err := u.next.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		// An adapter that retries fn (on a serialization failure, say) may
		// leave appended set by a rolled-back attempt: a spurious wake-up,
		// which DispatchSignal allows.
		return fn(ctx, notifyingTx{Tx: tx, appended: &appended})
	})
	if err == nil && appended.Load() {
		u.signal.Committed()
	}
	return err
}

// notifyingTx is a Tx whose Outbox notes successful appends.
type notifyingTx struct {
	ports.Tx
	appended *atomic.Bool
}

func (t notifyingTx) Outbox() ports.Outbox {
	return notifyingOutbox{Outbox: t.Tx.Outbox(), appended: t.appended}
}

type notifyingOutbox struct {
	ports.Outbox
	appended *atomic.Bool
}

func (o notifyingOutbox) Append(ctx context.Context, events ...model.OutboxEvent) error {
	if err := o.Outbox.Append(ctx, events...); err != nil {
		return err
	}
	for _, e := range events {
		// A held event is the relay's until its hold ends (Relay): a
		// Dispatcher woken now would find nothing due.
		if e.LockedBy == "" {
			o.appended.Store(true)
			break
		}
	}
	return nil
}
