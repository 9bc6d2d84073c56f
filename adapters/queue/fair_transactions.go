package queue

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// FairTransactions is uow for a worker's jobs: at most n of their
// transactions at once, each freed turn going to the workspace that got
// one least recently, as the worker's slots are handed out. Without it the
// hundreds of jobs in flight meet at the database pool, which serves them
// first come first served and fails a wait longer than its acquire
// timeout: one workspace's backlog would queue another's few jobs behind
// it, and fail jobs of both as "the database is busy". n should leave the
// pool a few connections for what else the process runs.
func FairTransactions(uow ports.UnitOfWork, n int) ports.UnitOfWork {
	return &fairTransactions{uow: uow, turns: newSlots(max(n, 1), time.Hour, nil, nil)}
}

type fairTransactions struct {
	uow   ports.UnitOfWork
	turns *slots
}

func (f *fairTransactions) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	release, _, err := f.turns.acquire(ctx, workspace, "", "", nil)
	if err != nil {
		return domain.Wrap(domain.CodeUnavailable, err, "waiting for the database")
	}
	defer release(CallResult{})
	return f.uow.Transact(ctx, workspace, fn)
}
