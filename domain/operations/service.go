// Package operations holds the use cases of user-visible operations.
package operations

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Service reads operations.
type Service struct {
	uow       ports.UnitOfWork
	waiters   *Waiters
	admission Admission
}

// Admission admits the database work of one request of a workspace, or
// refuses it (the workspace's limits, domain/limits); leave ends it.
type Admission interface {
	Enter(ctx context.Context, workspace uuid.UUID) (leave func(), err error)
}

// admitAll is the Admission of a Service without WithAdmission.
type admitAll struct{}

func (admitAll) Enter(context.Context, uuid.UUID) (func(), error) { return func() {}, nil }

func NewService(uow ports.UnitOfWork) *Service { return &Service{uow: uow, admission: admitAll{}} }

// WithAdmission makes Wait ask a around each of its reads, and never
// while it waits: a read waiting for an end holds none of its workspace's
// slots of concurrent work, so waits (bounded on their own by Waiters)
// cannot starve the workspace's other requests.
func (s *Service) WithAdmission(a Admission) *Service {
	s.admission = a
	return s
}

// WithWaiters lets reads wait for an operation's end (Wait); without them
// Wait reads at once.
func (s *Service) WithWaiters(w *Waiters) *Service {
	s.waiters = w
	return s
}

// Get reads one operation of the caller's workspace, with its delivery;
// CodeNotFound otherwise.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.Operation, error) {
	var op model.Operation
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		op, err = tx.Operations().Get(ctx, id)
		if err != nil {
			return err
		}
		ops := []model.Operation{op}
		err = withDelivery(ctx, tx, ops)
		op = ops[0]
		return err
	})
	return op, err
}

// Wait reads one operation as Get does, but first waits, up to wait (at
// most MaxWait), for it to end: it answers as soon as the operation is
// finished, or with its state when the wait is over, the caller went away
// or the waiters were stopped. It holds no database connection while it
// waits. CodeTooManyWaiters when this process or the workspace has as many
// reads waiting as it may.
//
// The waiter is registered before the first read, so an end committed
// between that read and the wait still wakes it.
func (s *Service) Wait(ctx context.Context, p model.Principal, id uuid.UUID, wait time.Duration) (model.Operation, error) {
	if wait <= 0 || s.waiters == nil {
		return s.admittedGet(ctx, p, id)
	}
	one, err := s.waiters.add(p.WorkspaceID, id)
	if err != nil || one == nil {
		if err != nil {
			return model.Operation{}, err
		}
		return s.admittedGet(ctx, p, id)
	}
	defer s.waiters.remove(one)
	timer := time.NewTimer(min(wait, MaxWait))
	defer timer.Stop()
	for {
		op, err := s.admittedGet(ctx, p, id)
		if err != nil || op.Finished() || s.waiters.isStopped() {
			return op, err
		}
		if woken := s.park(ctx, one, timer); !woken {
			if ctx.Err() != nil {
				return op, nil
			}
			return s.admittedGet(ctx, p, id)
		}
	}
}

// admittedGet is Get within one admission of the workspace's work.
func (s *Service) admittedGet(ctx context.Context, p model.Principal, id uuid.UUID) (model.Operation, error) {
	leave, err := s.admission.Enter(ctx, p.WorkspaceID)
	if err != nil {
		return model.Operation{}, err
	}
	defer leave()
	return s.Get(ctx, p, id)
}

// park waits for one's wake-up (true), the timer or ctx's end (false).
func (s *Service) park(ctx context.Context, one *waiter, timer *time.Timer) bool {
	s.waiters.park(1)
	defer s.waiters.park(-1)
	select {
	case <-one.wake: // read again: it may have ended
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// withDelivery sets the Delivery of each of ops whose event is still kept.
func withDelivery(ctx context.Context, tx ports.Tx, ops []model.Operation) error {
	events, err := tx.Outbox().ForOperations(ctx, ops)
	if err != nil {
		return err
	}
	for i := range ops {
		if e, ok := events[ops[i].ID]; ok {
			ops[i].Delivery = model.DeliveryOf(e)
			if ops[i].Status == model.OperationSucceeded {
				// Its job got through: what it waited for on the way (a
				// breaker, a pace) is history, and read as a failure.
				ops[i].Delivery.LastError = ""
			}
		}
	}
	return nil
}
