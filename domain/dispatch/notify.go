package dispatch

import (
	"context"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/oncommit"
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
	return oncommit.Wrap(uow,
		func(tx ports.Tx, appended *oncommit.Notes[struct{}]) ports.Tx {
			return notifyingTx{Tx: tx, appended: appended}
		},
		func(context.Context, []struct{}) { signal.Committed() })
}

// notifyingTx is a Tx whose Outbox notes successful appends.
type notifyingTx struct {
	ports.Tx
	appended *oncommit.Notes[struct{}]
}

func (t notifyingTx) Outbox() ports.Outbox {
	return notifyingOutbox{Outbox: t.Tx.Outbox(), appended: t.appended}
}

type notifyingOutbox struct {
	ports.Outbox
	appended *oncommit.Notes[struct{}]
}

func (o notifyingOutbox) Append(ctx context.Context, events ...model.OutboxEvent) error {
	if err := o.Outbox.Append(ctx, events...); err != nil {
		return err
	}
	for _, e := range events {
		// A held event is the relay's until its hold ends (Relay): a
		// Dispatcher woken now would find nothing due.
		if e.LockedBy == "" {
			o.appended.Add(struct{}{})
			break
		}
	}
	return nil
}
