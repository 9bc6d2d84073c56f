package dispatch

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// announceDeadLetter writes, in tx, the transaction that dead-lettered e,
// the webhook deliveries of dead_letter.created to the workspace's
// subscribed endpoints, as the worker does for a job it gives up on: an
// operator who subscribed learns of every dead letter, whoever parked it.
func announceDeadLetter(ctx context.Context, tx ports.Tx, e model.OutboxEvent, at time.Time) error {
	op, ok := model.JobOperationID(e.Payload)
	if !ok {
		op = uuid.Nil
	}
	return webhooks.DeadLettered(ctx, tx, e.WorkspaceID, e.ID, e.Type, op, at)
}

// announceLeaseDeadLetters announces the events the claim dead-lettered
// because their lease expired once too often (a Dispatcher crashed or hung
// on them), in a transaction of its own right after the claim: the claim is
// one statement and writes no deliveries. A Dispatcher killed between the
// two leaves those dead letters unannounced; they are still listed, logged
// and counted.
func (d *Dispatcher) announceLeaseDeadLetters(ctx context.Context, ws uuid.UUID, ids []uuid.UUID) error {
	return d.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		at := d.clock.Now()
		for _, id := range ids {
			e, err := tx.Outbox().Get(ctx, id)
			if err != nil {
				return err
			}
			if err := announceDeadLetter(ctx, tx, e, at); err != nil {
				return err
			}
		}
		return nil
	})
}
