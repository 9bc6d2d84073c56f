package app

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/ports"
)

// MaintenanceModule runs the cleanup of expired idempotency records.
var MaintenanceModule = fx.Module("maintenance",
	fx.Provide(func(d ports.IdempotencyDiscovery, uow ports.UnitOfWork, clock ports.Clock, cfg Config) *idempotency.Cleaner {
		return idempotency.NewCleaner(d, uow, clock, cfg.CleanupBatch)
	}),
	fx.Invoke(runCleaner),
)

func runCleaner(lc fx.Lifecycle, c *idempotency.Cleaner, cfg Config, log *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				defer close(done)
				for {
					// Jitter keeps several instances from cleaning in step.
					wait := cfg.CleanupInterval/2 + rand.N(cfg.CleanupInterval)
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
					n, err := c.RunOnce(ctx)
					switch {
					case err != nil && ctx.Err() == nil:
						log.Error("idempotency cleanup failed", slog.String("error", err.Error()), slog.Int("deleted", n))
					case n > 0:
						log.Info("idempotency cleanup", slog.Int("deleted", n))
					}
				}
			}()
			return nil
		},
		OnStop: func(stopCtx context.Context) error {
			cancel()
			select {
			case <-done:
				return nil
			case <-stopCtx.Done():
				return stopCtx.Err()
			}
		},
	})
}
