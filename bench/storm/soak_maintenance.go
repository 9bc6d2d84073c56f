package storm

import (
	"context"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/idempotency"
)

// soakMaintenance is the retention of the soak on a short schedule: the
// service's own cleaners (dispatch.RetentionCleaner over the partitions of
// sql/009, idempotency.Cleaner), run by the bench as the application role
// with a retention of minutes. The processes refuse such short settings
// (ONCE_OUTBOX_RETENTION at least 1h, ONCE_IDEMPOTENCY_RETENTION at least
// 24h: a retried request must find its record for a day), so the bench plays the clock for the idempotency
// cleaner: it asks at now + (the records' retention - the soak's), which
// removes the records older than the soak's retention.
type soakMaintenance struct {
	db     *bun.DB
	every  time.Duration
	outbox *dispatch.RetentionCleaner
	idem   *idempotency.Cleaner

	mu      sync.Mutex
	removed int
	failure string
}

// shiftedClock is the system clock moved by an offset.
type shiftedClock time.Duration

func (c shiftedClock) Now() time.Time { return time.Now().UTC().Add(time.Duration(c)) }

func newSoakMaintenance(ctx context.Context, d *deployment, cfg SoakConfig) (*soakMaintenance, error) {
	db, err := postgres.Open(ctx, d.db.AppDSN)
	if err != nil {
		return nil, err
	}
	uow := postgres.NewUnitOfWork(db)
	return &soakMaintenance{
		db:    db,
		every: cfg.CleanupEvery,
		outbox: dispatch.NewRetentionCleaner(postgres.NewOutboxDiscovery(db), postgres.NewOutboxPartitions(db, cfg.PartitionWidth),
			uow, shiftedClock(0), cfg.Retention, 0),
		idem: idempotency.NewCleaner(postgres.NewDiscovery(db), uow, shiftedClock(d.config.IdempotencyRetention-cfg.Retention), 0),
	}, nil
}

// run cleans every interval until ctx ends.
func (m *soakMaintenance) run(ctx context.Context) {
	onEveryTick(ctx, m.every, func() bool {
		for _, job := range []func(context.Context) (int, error){m.outbox.RunOnce, m.idem.RunOnce} {
			n, err := job(ctx)
			m.mu.Lock()
			m.removed += n
			if err != nil && ctx.Err() == nil {
				m.failure = domain.SanitizeError(err)
			}
			m.mu.Unlock()
		}
		return true
	})
}

// window is what was removed since the last call, and the last failure.
func (m *soakMaintenance) window() (int, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, f := m.removed, m.failure
	m.removed, m.failure = 0, ""
	return n, f
}

func (m *soakMaintenance) close() { _ = m.db.Close() }
