package benchdispatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// EventType is the type of the bench's events; with the run's prefix it is
// the one broker topic of a run.
const EventType = "bench.dispatch"

// benchPayload is a small event body, the size of a real one.
type benchPayload struct {
	Seq       int       `json:"seq"`
	Workspace uuid.UUID `json:"workspace"`
}

// produce commits the recorder's events like a busy API: producers
// goroutines each run transactions of perTx events, transaction t going to
// workspace t mod M so that the events spread evenly. Each event's commit
// time is taken right after Transact returns.
func produce(ctx context.Context, uow ports.UnitOfWork, clock ports.Clock, workspaces []uuid.UUID, rec *recorder, producers, perTx int) error {
	n := len(rec.ids)
	txs := (n + perTx - 1) / perTx
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range producers {
		wg.Go(func() {
			for ctx.Err() == nil {
				t := int(next.Add(1) - 1)
				if t >= txs {
					return
				}
				from, to := t*perTx, min((t+1)*perTx, n)
				ws := workspaces[t%len(workspaces)]
				err := uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
					now := clock.Now()
					events := make([]domain.OutboxEvent, 0, to-from)
					for i := from; i < to; i++ {
						e, err := domain.NewOutboxEvent(rec.ids[i], ws, EventType, "bench", ws,
							benchPayload{Seq: i, Workspace: ws}, now)
						if err != nil {
							return err
						}
						events = append(events, e)
					}
					return tx.Outbox().Append(ctx, events...)
				})
				if err != nil {
					errs <- fmt.Errorf("producer transaction %d: %w", t, err)
					cancel()
					return
				}
				rec.committedAt(from, to)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// createWorkspaces creates m workspaces through the unit of work.
func createWorkspaces(ctx context.Context, uow ports.UnitOfWork, clock ports.Clock, m int) ([]uuid.UUID, error) {
	ids := make([]uuid.UUID, m)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
		w := domain.Workspace{ID: ids[i], Name: fmt.Sprintf("bench %d", i+1), CreatedAt: clock.Now()}
		if err := uow.Transact(ctx, w.ID, func(ctx context.Context, tx ports.Tx) error {
			return tx.Workspaces().Create(ctx, w)
		}); err != nil {
			return nil, fmt.Errorf("create workspace %d: %w", i+1, err)
		}
	}
	return ids, nil
}
