package operations

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// AnnounceEnds wraps uow so that a transaction that ended operations
// (OperationRepository.Update to succeeded or failed, accepted) tells ends
// once it has committed, outside the transaction, as
// dispatch.NotifyOnCommit does for events. Every end goes through
// OperationRepository.Update in a unit of work, whichever use case records
// it, so wrapping the unit of work hears them all.
//
// A commit that fails with CodeUnavailable may still have committed; it
// announces nothing, and its waiters answer when their wait ends.
func AnnounceEnds(uow ports.UnitOfWork, ends ports.OperationEnds) ports.UnitOfWork {
	return announcingUnitOfWork{next: uow, ends: ends}
}

type announcingUnitOfWork struct {
	next ports.UnitOfWork
	ends ports.OperationEnds
}

func (u announcingUnitOfWork) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	ended := &endedIDs{}
	err := u.next.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		// An adapter that retries fn may leave the ids of a rolled-back
		// attempt: a spurious announcement, which waiters allow.
		return fn(ctx, announcingTx{Tx: tx, ended: ended})
	})
	if err == nil {
		if ids := ended.take(); len(ids) > 0 {
			u.ends.Ended(ids...)
		}
	}
	return err
}

// endedIDs are the operations a transaction ended; locked because a use
// case may share its tx between goroutines.
type endedIDs struct {
	mu  sync.Mutex
	ids []uuid.UUID
}

func (e *endedIDs) add(id uuid.UUID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ids = append(e.ids, id)
}

func (e *endedIDs) take() []uuid.UUID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ids
}

type announcingTx struct {
	ports.Tx
	ended *endedIDs
}

func (t announcingTx) Operations() ports.OperationRepository {
	return announcingOperations{OperationRepository: t.Tx.Operations(), ended: t.ended}
}

type announcingOperations struct {
	ports.OperationRepository
	ended *endedIDs
}

func (o announcingOperations) Update(ctx context.Context, op model.Operation) error {
	if err := o.OperationRepository.Update(ctx, op); err != nil {
		return err
	}
	if op.Finished() {
		o.ended.add(op.ID)
	}
	return nil
}
