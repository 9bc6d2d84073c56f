// Package retention removes what has had its time: dead letters, finished
// tasks and finished operations, each after its own retention, workspace
// by workspace under row-level security in bounded batches (domain/sweep),
// as the outbox's retention removes dispatched events.
package retention

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/sweep"
	"github.com/oncehq/once/ports"
)

// Defaults and the shortest retention accepted. A record must outlive the
// idempotency key that replays it (a replayed 202 names an operation, a
// task), and a dead letter the time an operator needs to notice and
// redrive it.
const (
	DefaultOperations  = 30 * 24 * time.Hour
	DefaultTasks       = 30 * 24 * time.Hour
	DefaultDeadLetters = 14 * 24 * time.Hour
	Min                = 24 * time.Hour
)

// Policy is how long each kind is kept once finished.
type Policy struct {
	Operations, Tasks, DeadLetters time.Duration
}

// Validate refuses a policy that would remove something still useful,
// naming the variables; idempotency is the idempotency retention.
func (p Policy) Validate(idempotency time.Duration) error {
	floor := max(Min, idempotency)
	switch {
	case p.Operations < floor || p.Tasks < floor:
		return domain.Errorf(domain.CodeValidation,
			"ONCE_OPERATION_RETENTION (%s) and ONCE_TASK_RETENTION (%s) must be at least %s and at least ONCE_IDEMPOTENCY_RETENTION (%s): a replayed response names them",
			p.Operations, p.Tasks, Min, idempotency)
	case p.DeadLetters < Min:
		return domain.Errorf(domain.CodeValidation, "ONCE_DEAD_LETTER_RETENTION (%s) must be at least %s: operators need time to redrive", p.DeadLetters, Min)
	case p.DeadLetters > p.Operations:
		return domain.Errorf(domain.CodeValidation,
			"ONCE_DEAD_LETTER_RETENTION (%s) must not exceed ONCE_OPERATION_RETENTION (%s): a dead letter refers to its operation, which would otherwise be kept for it",
			p.DeadLetters, p.Operations)
	}
	return nil
}

// Observer hears how many records of a kind a pass removed (metrics).
type Observer interface {
	Expired(kind model.Expiring, n int)
}

// Cleaner removes expired records. Dead letters go first, then the task
// tables, then operations: a dead letter or a live event keeps its
// operation (see ports.Retention), so each pass frees what the next kind
// waits on.
type Cleaner struct {
	store    ports.Retention
	clock    ports.Clock
	policy   Policy
	batch    int
	observer Observer
}

// NewCleaner builds a cleaner deleting at most batch (sweep.DefaultBatch
// if <= 0) rows per transaction; observer may be nil.
func NewCleaner(store ports.Retention, clock ports.Clock, policy Policy, batch int, observer Observer) *Cleaner {
	if batch <= 0 {
		batch = sweep.DefaultBatch
	}
	return &Cleaner{store: store, clock: clock, policy: policy, batch: batch, observer: observer}
}

// step is one kind with its retention.
type step struct {
	kind      model.Expiring
	retention time.Duration
}

// steps are the kinds in the order a pass removes them.
func (c *Cleaner) steps() []step {
	steps := []step{{model.ExpiringDeadLetters, c.policy.DeadLetters}}
	for _, k := range kinds.Expiring() {
		steps = append(steps, step{model.Expiring(k.Table), c.policy.Tasks})
	}
	return append(steps, step{model.ExpiringOperations, c.policy.Operations})
}

// RunOnce removes every record expired now and returns how many went; it
// stops at the first failure (the next pass resumes).
func (c *Cleaner) RunOnce(ctx context.Context) (int, error) {
	now := c.clock.Now()
	total := 0
	for _, k := range c.steps() {
		before := now.Add(-k.retention)
		n, err := sweep.Run(ctx, nil, sweep.Job{
			Discover: func(ctx context.Context, limit int) ([]uuid.UUID, error) {
				return c.store.WorkspacesWithExpired(ctx, k.kind, before, limit)
			},
			DeleteIn: func(ctx context.Context, ws uuid.UUID, limit int) (int, error) {
				return c.store.DeleteExpired(ctx, ws, k.kind, before, limit)
			},
			Batch: c.batch,
		})
		total += n
		if n > 0 && c.observer != nil {
			c.observer.Expired(k.kind, n)
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
