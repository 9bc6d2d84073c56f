package dispatch

import (
	"context"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/oncommit"
	"github.com/oncehq/once/ports"
)

// WakeOnEnds wraps uow so that a transaction that ended operations
// (OperationRepository.Update to an end, accepted) wakes the Dispatchers
// (signal) once it has committed, as NotifyOnCommit does for events. A
// job's end is what lets the next event of its ordering key be claimed
// (claimDueEvents waits for it), and no event is committed then to wake
// anyone: without this the follower would go out at the Dispatchers' next
// poll, not at once.
//
// The end of a job that has no ordering key (domain.UnorderedJob: a
// worker's run of a message without one) frees no follower, and wakes no
// one: under load every job ended, and each wake cost a Dispatcher a
// discovery round that found nothing (docs/benchmarks.md, "Where a job's
// CPU goes"). Every other end wakes: a keyed job's, a cancel's, a worker
// giving up (Committed coalesces, one NOTIFY per few milliseconds per
// process).
func WakeOnEnds(uow ports.UnitOfWork, signal ports.DispatchSignal) ports.UnitOfWork {
	return oncommit.Wrap(uow,
		func(tx ports.Tx, ended *oncommit.Notes[struct{}]) ports.Tx {
			return wakingTx{Tx: tx, ended: ended}
		},
		func(context.Context, []struct{}) { signal.Committed() })
}

type wakingTx struct {
	ports.Tx
	ended *oncommit.Notes[struct{}]
}

func (t wakingTx) Operations() ports.OperationRepository {
	return wakingOperations{OperationRepository: t.Tx.Operations(), ended: t.ended}
}

type wakingOperations struct {
	ports.OperationRepository
	ended *oncommit.Notes[struct{}]
}

func (o wakingOperations) Update(ctx context.Context, op model.Operation) error {
	if err := o.OperationRepository.Update(ctx, op); err != nil {
		return err
	}
	if op.Finished() && !domain.UnorderedJob(ctx) {
		o.ended.Add(struct{}{})
	}
	return nil
}
