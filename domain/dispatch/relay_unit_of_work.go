package dispatch

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// UnitOfWork wraps uow so that every event appended in its transactions is
// written held by the relay and, once the transaction has committed, handed
// to the relay to publish. Use cases and workers see no difference: their
// follow-up events take the same path as a request's.
//
// An event appended with a next_attempt_at beyond the hold (a job meant
// for later) is written as given and left to the Dispatchers. A commit
// that fails with CodeUnavailable may still have committed: its events are
// not handed over and the Dispatchers deliver them when the hold ends.
func (r *Relay) UnitOfWork(uow ports.UnitOfWork) ports.UnitOfWork {
	return relayingUnitOfWork{next: uow, relay: r}
}

type relayingUnitOfWork struct {
	next  ports.UnitOfWork
	relay *Relay
}

func (u relayingUnitOfWork) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	held := &heldEvents{}
	err := u.next.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		// An adapter that runs fn again starts from nothing held.
		held.reset()
		return fn(ctx, relayingTx{Tx: tx, relay: u.relay, held: held})
	})
	if err != nil {
		return err
	}
	if events := held.take(); len(events) > 0 {
		if h := u.relay.hooks.Committed; h != nil {
			h(events)
		}
		u.relay.hand(ctx, events)
	}
	return nil
}

// heldEvents are the events one transaction appended held. Guarded: a use
// case may share its tx between goroutines.
type heldEvents struct {
	mu     sync.Mutex
	events []model.OutboxEvent
}

func (h *heldEvents) reset() {
	h.mu.Lock()
	h.events = nil
	h.mu.Unlock()
}

func (h *heldEvents) add(events []model.OutboxEvent) {
	h.mu.Lock()
	h.events = append(h.events, events...)
	h.mu.Unlock()
}

func (h *heldEvents) take() []model.OutboxEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.events
}

// relayingTx is a Tx whose Outbox writes events held by the relay.
type relayingTx struct {
	ports.Tx
	relay *Relay
	held  *heldEvents
}

func (t relayingTx) Outbox() ports.Outbox {
	return relayingOutbox{Outbox: t.Tx.Outbox(), relay: t.relay, held: t.held}
}

type relayingOutbox struct {
	ports.Outbox
	relay *Relay
	held  *heldEvents
}

func (o relayingOutbox) Append(ctx context.Context, events ...model.OutboxEvent) error {
	now := o.relay.clock.Now()
	until := now.Add(o.relay.cfg.Hold)
	out := make([]model.OutboxEvent, len(events))
	var held []model.OutboxEvent
	for i, e := range events {
		if (e.Status == "" || e.Status == model.OutboxPending) && e.LockedBy == "" && !e.NextAttemptAt.After(until) {
			e.LockedBy, e.NextAttemptAt = o.relay.cfg.Holder, until
			held = append(held, e)
		}
		out[i] = e
	}
	if err := o.Outbox.Append(ctx, out...); err != nil {
		return err
	}
	o.held.add(held)
	return nil
}
