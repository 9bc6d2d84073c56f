// Package oncommit runs what a transaction noted once it has committed:
// the wake-ups, announcements and hand-overs that must not run inside the
// business transaction (a NOTIFY there would serialize every commit) nor
// at all when it rolls back.
package oncommit

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// Notes are what one transaction noted for after its commit. Guarded: a
// use case may share its tx between goroutines.
type Notes[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add notes items.
func (n *Notes[T]) Add(items ...T) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.items = append(n.items, items...)
}

func (n *Notes[T]) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.items = nil
}

func (n *Notes[T]) take() []T {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.items
}

// Wrap returns uow whose transactions each see the Tx that wrap makes of
// theirs, with notes of their own, and once one has committed (Transact
// returned nil) calls committed with what it noted, if anything. An
// adapter that runs fn again (after a serialization failure, say) starts
// it from no notes.
//
// A commit that fails with CodeUnavailable may still have committed;
// committed is not called then, and whoever relies on it needs a fallback
// (the Dispatchers' poll, the end of a wait).
func Wrap[T any](uow ports.UnitOfWork, wrap func(tx ports.Tx, notes *Notes[T]) ports.Tx, committed func(ctx context.Context, noted []T)) ports.UnitOfWork {
	return unitOfWork[T]{next: uow, wrap: wrap, committed: committed}
}

type unitOfWork[T any] struct {
	next      ports.UnitOfWork
	wrap      func(ports.Tx, *Notes[T]) ports.Tx
	committed func(context.Context, []T)
}

func (u unitOfWork[T]) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	notes := &Notes[T]{}
	err := u.next.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		notes.reset()
		return fn(ctx, u.wrap(tx, notes))
	})
	if err != nil {
		return err
	}
	if noted := notes.take(); len(noted) > 0 {
		u.committed(ctx, noted)
	}
	return nil
}
