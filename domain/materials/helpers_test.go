package materials_test

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// crashingUoW plays a worker that dies before a transaction commits: the
// nth Transact call (counting from 1) runs its function and is then rolled
// back, once.
type crashingUoW struct {
	inner ports.UnitOfWork

	mu      sync.Mutex
	calls   int
	crashOn int
}

func (u *crashingUoW) crashOnCall(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls, u.crashOn = 0, n
}

func (u *crashingUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	u.mu.Lock()
	u.calls++
	crash := u.calls == u.crashOn
	if crash {
		u.crashOn = 0
	}
	u.mu.Unlock()
	return u.inner.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		if crash {
			return domain.Errorf(domain.CodeUnavailable, "simulated crash before commit")
		}
		return nil
	})
}
