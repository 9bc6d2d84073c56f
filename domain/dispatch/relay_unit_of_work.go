package dispatch

import (
	"context"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/oncommit"
	"github.com/oncehq/once/ports"
)

// UnitOfWork wraps uow so that every event appended in its transactions is
// written held by the relay and, once the transaction has committed, handed
// to the relay to publish. Use cases and workers see no difference: their
// follow-up events take the same path as a request's.
//
// An event appended with a next_attempt_at beyond the hold (a job meant
// for later) is written as given and left to the Dispatchers. So is every
// event with an ordering key: it may have to wait for an earlier job of its
// key, and only the Dispatchers' claim reads the key's order in the outbox
// (claimDueEvents); the relay, publishing right after the commit, would
// start it beside or before that job. It is written due now and unheld, and
// the commit wakes the Dispatchers (NotifyOnCommit). A commit
// that fails with CodeUnavailable may still have committed: its events are
// not handed over and the Dispatchers deliver them when the hold ends.
//
// Publishing right after the commit, with no claim of its own, is safe
// under synchronous replication because the commit's success is the
// standby's: the PostgreSQL unit of work answers a commit whose wait for
// the synchronous standby was cancelled (committed on the primary alone,
// lost by a failover) with CodeUnavailable, so its events are never
// handed over. The Dispatchers deliver them after the hold only through
// their claim, a write whose commit waits for the standby in turn (WAL
// streams in order, so a confirmed claim confirms the events it read),
// and a claim whose wait was cancelled hands out nothing
// (adapters/postgres/unconfirmed_commit.go). Either way no event is
// published whose commit the standby may not have.
func (r *Relay) UnitOfWork(uow ports.UnitOfWork) ports.UnitOfWork {
	return oncommit.Wrap(uow,
		func(tx ports.Tx, held *oncommit.Notes[model.OutboxEvent]) ports.Tx {
			return relayingTx{Tx: tx, relay: r, held: held}
		},
		func(ctx context.Context, events []model.OutboxEvent) {
			if h := r.hooks.Committed; h != nil {
				h(events)
			}
			r.hand(ctx, events)
		})
}

// relayingTx is a Tx whose Outbox writes events held by the relay.
type relayingTx struct {
	ports.Tx
	relay *Relay
	held  *oncommit.Notes[model.OutboxEvent]
}

func (t relayingTx) Outbox() ports.Outbox {
	return relayingOutbox{Outbox: t.Tx.Outbox(), relay: t.relay, held: t.held}
}

type relayingOutbox struct {
	ports.Outbox
	relay *Relay
	held  *oncommit.Notes[model.OutboxEvent]
}

func (o relayingOutbox) Append(ctx context.Context, events ...model.OutboxEvent) error {
	now := o.relay.clock.Now()
	until := now.Add(o.relay.cfg.Hold)
	out := make([]model.OutboxEvent, len(events))
	var held []model.OutboxEvent
	for i, e := range events {
		if (e.Status == "" || e.Status == model.OutboxPending) && e.LockedBy == "" && e.OrderingKey == "" && !e.NextAttemptAt.After(until) {
			e.LockedBy, e.NextAttemptAt = o.relay.cfg.Holder, until
			held = append(held, e)
		}
		out[i] = e
	}
	if err := o.Outbox.Append(ctx, out...); err != nil {
		return err
	}
	o.held.Add(held...)
	return nil
}
