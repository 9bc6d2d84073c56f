package app

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/ports"
)

// MaintenanceModule runs the cleanup of expired idempotency records.
var MaintenanceModule = fx.Module("maintenance",
	fx.Invoke(func(lc fx.Lifecycle, d ports.IdempotencyDiscovery, uow ports.UnitOfWork, clock ports.Clock, cfg Config, log *slog.Logger) {
		c := idempotency.NewCleaner(d, uow, clock, cfg.CleanupBatch)
		runEvery(lc, cfg.CleanupInterval, log, "idempotency cleanup", c.RunOnce)
	}),
)
