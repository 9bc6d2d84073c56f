package operations

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/oncommit"
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
	return oncommit.Wrap(uow,
		func(tx ports.Tx, ended *oncommit.Notes[uuid.UUID]) ports.Tx {
			return announcingTx{Tx: tx, ended: ended}
		},
		func(_ context.Context, ended []uuid.UUID) { ends.Ended(ended...) })
}

type announcingTx struct {
	ports.Tx
	ended *oncommit.Notes[uuid.UUID]
}

func (t announcingTx) Operations() ports.OperationRepository {
	return announcingOperations{OperationRepository: t.Tx.Operations(), ended: t.ended}
}

type announcingOperations struct {
	ports.OperationRepository
	ended *oncommit.Notes[uuid.UUID]
}

func (o announcingOperations) Update(ctx context.Context, op model.Operation) error {
	if err := o.OperationRepository.Update(ctx, op); err != nil {
		return err
	}
	if op.Finished() {
		o.ended.Add(op.ID)
	}
	return nil
}
