package app

import (
	"context"
	"log/slog"

	"github.com/uptrace/bun"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/ports"
)

// PostgresModule keeps every stateful port in PostgreSQL, connected as the
// application role (no BYPASSRLS, owns nothing).
var PostgresModule = fx.Module("postgres",
	fx.Provide(
		newPostgresDB,
		fx.Annotate(postgres.NewUnitOfWork, fx.As(new(ports.UnitOfWork))),
		fx.Annotate(func(db *bun.DB) *postgres.Discovery { return postgres.NewDiscovery(db) }, fx.As(new(ports.IdempotencyDiscovery))),
	),
)

func newPostgresDB(lc fx.Lifecycle, cfg Config, log *slog.Logger) (*bun.DB, error) {
	db, err := postgres.Open(context.Background(), cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	log.Info("using PostgreSQL")
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return db.Close() }})
	return db, nil
}
