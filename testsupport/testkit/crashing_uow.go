package testkit

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// CrashingUoW plays a worker that dies before a transaction commits: after
// CrashNext(n), the n-th Transact call from then on runs its function and
// is then rolled back with a domain.CodeUnavailable error, once. Every other
// call goes straight to the wrapped unit of work. It is safe for concurrent
// use; calls are counted as they enter Transact.
type CrashingUoW struct {
	ports.UnitOfWork

	mu      sync.Mutex
	calls   int
	crashAt int // the call number to crash, 0 for none
}

// NewCrashingUoW wraps inner; it crashes nothing until CrashNext is called.
func NewCrashingUoW(inner ports.UnitOfWork) *CrashingUoW {
	return &CrashingUoW{UnitOfWork: inner}
}

// CrashNext makes the n-th Transact call from now (counting from 1) crash
// before commit, replacing any crash still pending; n <= 0 cancels it.
func (u *CrashingUoW) CrashNext(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n <= 0 {
		u.crashAt = 0
		return
	}
	u.crashAt = u.calls + n
}

// Transact runs fn through the wrapped unit of work. On the chosen call, if
// fn succeeds, it returns domain.CodeUnavailable so that everything fn wrote
// rolls back; an error from fn is returned unchanged, and either way the
// crash is spent.
func (u *CrashingUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	u.mu.Lock()
	u.calls++
	crash := u.crashAt != 0 && u.calls == u.crashAt
	if crash {
		u.crashAt = 0
	}
	u.mu.Unlock()
	if !crash {
		return u.UnitOfWork.Transact(ctx, ws, fn)
	}
	return u.UnitOfWork.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return domain.Errorf(domain.CodeUnavailable, "simulated crash before commit")
	})
}
