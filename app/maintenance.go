package app

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/retention"
	"github.com/oncehq/once/ports"
)

// MaintenanceModule runs the cleanup of expired idempotency records and,
// where the store has a retention (PostgreSQL; the embedded memory store
// keeps everything until the process exits), of finished operations,
// tasks and dead letters past their retention.
var MaintenanceModule = fx.Module("maintenance",
	fx.Invoke(func(lc fx.Lifecycle, d ports.IdempotencyDiscovery, uow ports.UnitOfWork, clock ports.Clock, cfg RetentionConfig, log *slog.Logger) {
		c := idempotency.NewCleaner(d, uow, clock, cfg.CleanupBatch)
		runEvery(lc, cfg.CleanupInterval, log, "idempotency cleanup", c.RunOnce)
	}),
	fx.Invoke(func(lc fx.Lifecycle, in retentionIn) {
		if in.Store == nil {
			return
		}
		obs := retentionLog{metrics: in.Metrics, log: in.Log.With("component", "maintenance")}
		c := retention.NewCleaner(in.Store, in.Clock, in.Config.RetentionPolicy(), in.Config.CleanupBatch, obs)
		runEvery(lc, in.Config.CleanupInterval, in.Log, "retention cleanup", c.RunOnce)
	}),
)

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
