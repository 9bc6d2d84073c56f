package app

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/retention"
	"github.com/oncehq/once/domain/revocation"
	"github.com/oncehq/once/ports"
)

// maintenance is every periodic clean-up of a process, one service per
// concern in one list, as River's maintenance services are: each runs in
// the processes that hold what it cleans (the outbox's retention where the
// Dispatcher runs, the stream trim where workers consume Redis Streams),
// at its own jittered interval (runEvery), logged as component
// maintenance. worker says whether our workers consume the queue (of
// the kind ONCE_QUEUE names) here.
func maintenance(process ProcessConfig, queue string, worker bool) fx.Option {
	services := []fx.Option{idempotencyCleanup, retentionCleanup, uploadExpiry, revokedTokensSweep}
	if process.Dispatcher {
		services = append(services, outboxRetentionCleanup)
	}
	if worker {
		services = append(services, redisTrimModule(queue))
	}
	return fx.Module("maintenance", services...)
}

// idempotencyCleanup deletes expired idempotency records.
var idempotencyCleanup = fx.Invoke(func(lc fx.Lifecycle, d ports.IdempotencyDiscovery, uow ports.UnitOfWork, clock ports.Clock, cfg RetentionConfig, log *slog.Logger) {
	c := idempotency.NewCleaner(d, uow, clock, cfg.CleanupBatch)
	runEvery(lc, cfg.CleanupInterval, log, "idempotency cleanup", c.RunOnce)
})

// revokedTokensSweep deletes the revoked tokens past their expiry: they
// are refused anyway. (The users' cutoffs stay, one per member at most.)
var revokedTokensSweep = fx.Invoke(func(lc fx.Lifecycle, store ports.TokenRevocations, clock ports.Clock, cfg RetentionConfig, log *slog.Logger) {
	runEvery(lc, cfg.CleanupInterval, log, "revoked tokens sweep", func(ctx context.Context) (int, error) {
		return revocation.Sweep(ctx, store, clock, cfg.CleanupBatch)
	})
})

// retentionCleanup deletes finished operations, tasks and dead letters
// past their retention, where the store has one (PostgreSQL; the embedded
// memory store keeps everything until the process exits).
var retentionCleanup = fx.Invoke(func(lc fx.Lifecycle, in retentionIn) {
	if in.Store == nil {
		return
	}
	obs := retentionLog{metrics: in.Metrics, log: in.Log.With("component", "maintenance")}
	c := retention.NewCleaner(in.Store, in.Clock, in.Config.RetentionPolicy(), in.Config.CleanupBatch, obs)
	runEvery(lc, in.Config.CleanupInterval, in.Log, "retention cleanup", c.RunOnce)
})

// uploadExpiry deletes media never completed past
// ONCE_MEDIA_UPLOAD_EXPIRY with their objects, where the store can discover them across
// workspaces (PostgreSQL; the embedded store keeps everything until the
// process exits, objects included).
var uploadExpiry = fx.Invoke(func(lc fx.Lifecycle, in uploadExpiryIn) {
	if in.Discovery == nil {
		return
	}
	e := &media.UploadExpirer{UOW: in.UOW, Discovery: in.Discovery, Store: in.Store, Clock: in.Clock,
		Expiry: in.Config.MediaUploadExpiry, Batch: in.Config.CleanupBatch}
	runEvery(lc, in.Config.CleanupInterval, in.Log, "media upload expiry", e.RunOnce)
})

type uploadExpiryIn struct {
	fx.In
	Discovery ports.Retention `optional:"true"`
	UOW       ports.UnitOfWork
	Store     ports.ObjectStore
	Clock     ports.Clock
	Config    RetentionConfig
	Log       *slog.Logger
}

// outboxRetentionCleanup drops the outbox's dispatched events past their
// retention and keeps its partitions ahead of what is dispatched.
var outboxRetentionCleanup = fx.Invoke(func(lc fx.Lifecycle, d ports.OutboxDiscovery, p ports.OutboxPartitions, uow ports.UnitOfWork, clock ports.Clock, cfg RetentionConfig, log *slog.Logger) {
	c := dispatch.NewRetentionCleaner(d, p, uow, clock, cfg.OutboxRetention, cfg.CleanupBatch)
	// The slices for what this process is about to dispatch, at once;
	// the cleanup then keeps them ahead.
	runInBackground(lc, func(ctx context.Context) {
		if _, err := c.Prepare(ctx); err != nil && ctx.Err() == nil {
			log.Error("outbox partitions: prepare failed, retried at the next cleanup", slog.String("component", "maintenance"), slog.String("error", domain.SanitizeError(err)))
		}
	})
	runEvery(lc, cfg.CleanupInterval, log, "outbox retention cleanup", c.RunOnce)
})

type retentionIn struct {
	fx.In
	Store   ports.Retention `optional:"true"`
	Clock   ports.Clock
	Config  RetentionConfig
	Metrics *prometheus.Metrics
	Log     *slog.Logger
}

// retentionLog says, per kind, how many records a pass removed: one log
// line and once_retention_deleted_total{kind}.
type retentionLog struct {
	metrics *prometheus.Metrics
	log     *slog.Logger
}

func (r retentionLog) Expired(kind model.Expiring, n int) {
	r.metrics.Expired(kind, n)
	r.log.Info("retention: expired records deleted", slog.String("kind", string(kind)), slog.Int("deleted", n))
}

// runEvery runs job at a jittered interval (so instances do not clean in
// step) between start and stop, logging what it did.
func runEvery(lc fx.Lifecycle, interval time.Duration, log *slog.Logger, name string, job func(context.Context) (int, error)) {
	log = log.With("component", "maintenance")
	runInBackground(lc, func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval/2 + rand.N(interval)):
			}
			n, err := job(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Error(name+" failed", slog.String("error", domain.SanitizeError(err)), slog.Int("deleted", n))
			case n > 0:
				log.Info(name, slog.Int("deleted", n))
			}
		}
	})
}
