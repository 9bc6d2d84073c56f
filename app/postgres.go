package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
)

// PostgresModule keeps every stateful port in PostgreSQL, connected as the
// application role (no BYPASSRLS, owns nothing).
var PostgresModule = fx.Module("postgres",
	fx.Provide(
		newPostgresDB,
		newPostgresSignal,
		func(db *bun.DB, signal ports.DispatchSignal, cfg Config) ports.UnitOfWork {
			uow := postgres.NewUnitOfWork(db, postgres.WithAcquireTimeout(cfg.DBAcquireTimeout))
			return dispatch.NotifyOnCommit(uow, signal)
		},
		fx.Annotate(func(db *bun.DB) *postgres.Discovery { return postgres.NewDiscovery(db) }, fx.As(new(ports.IdempotencyDiscovery))),
		fx.Annotate(func(db *bun.DB) *postgres.OutboxDiscovery { return postgres.NewOutboxDiscovery(db) }, fx.As(new(ports.OutboxDiscovery)), fx.As(new(ports.OutboxBacklog))),
		// The Dispatcher's claim and mark, one round trip each.
		func(db *bun.DB, cfg Config) ports.OutboxClaims {
			return postgres.NewOutboxClaims(postgres.NewUnitOfWork(db, postgres.WithAcquireTimeout(cfg.DBAcquireTimeout)))
		},
	),
	fx.Invoke(func(m *prometheus.Metrics, db *bun.DB) { m.WatchDB(db.DB, "once") }),
)

// startupConnectTimeout bounds the first connection: a server that does not
// answer (a firewall dropping packets) fails start-up with a message
// instead of hanging it.
const startupConnectTimeout = 10 * time.Second

// DBPool is the pool configuration of cfg.
func (c Config) DBPool() postgres.Pool {
	return postgres.Pool{MaxConns: c.DBMaxConns, MaxIdle: c.DBMaxIdle, AcquireTimeout: c.DBAcquireTimeout}
}

func newPostgresDB(lc fx.Lifecycle, cfg Config, log *slog.Logger) (*bun.DB, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startupConnectTimeout)
	defer cancel()
	db, err := postgres.OpenPool(ctx, cfg.DatabaseURL, cfg.DBPool())
	if err != nil {
		return nil, err
	}
	log.Info("using PostgreSQL", slog.String("component", "postgres"), slog.Int("max_conns", cfg.DBMaxConns), slog.Duration("acquire_timeout", cfg.DBAcquireTimeout))
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return db.Close() }})
	return db, nil
}

// newPostgresSignal wakes dispatchers in every process: an in-process wake
// plus one coalesced NOTIFY after commit, and a LISTEN connection.
func newPostgresSignal(lc fx.Lifecycle, db *bun.DB, cfg Config, log *slog.Logger) ports.DispatchSignal {
	ctx, cancel := context.WithCancel(context.Background())
	s := postgres.NewSignal(ctx, db, cfg.DatabaseURL, log)
	lc.Append(fx.Hook{OnStop: func(context.Context) error {
		cancel()
		return s.Close()
	}})
	return s
}
