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
		// Which server the pool reaches: the completed-response cache of
		// the idempotency service is only as good as that server's data.
		postgres.NewServerIdentity,
		func(s *postgres.ServerIdentity) ports.StoreEpoch { return s },
		newPostgresDB,
		newPostgresSignal,
		func(db *bun.DB, signal ports.DispatchSignal, server *postgres.ServerIdentity, cfg Config) ports.UnitOfWork {
			return dispatch.NotifyOnCommit(newPostgresUoW(db, server, cfg), signal)
		},
		fx.Annotate(func(db *bun.DB) *postgres.Discovery { return postgres.NewDiscovery(db) }, fx.As(new(ports.IdempotencyDiscovery))),
		fx.Annotate(func(db *bun.DB) *postgres.OutboxDiscovery { return postgres.NewOutboxDiscovery(db) }, fx.As(new(ports.OutboxDiscovery)), fx.As(new(ports.OutboxBacklog))),
		// Dispatched events kept in time slices that retention drops whole.
		func(db *bun.DB, cfg Config) ports.OutboxPartitions {
			return postgres.NewOutboxPartitions(db, cfg.OutboxPartitionInterval)
		},
		// The retention cleanup of finished operations, tasks and dead
		// letters.
		func(db *bun.DB, server *postgres.ServerIdentity, cfg Config) ports.Retention {
			return postgres.NewRetention(db, newPostgresUoW(db, server, cfg))
		},
		// The relay's marks and releases, one round trip per batch.
		func(db *bun.DB, server *postgres.ServerIdentity, cfg Config) ports.OutboxRelayMarks {
			return postgres.NewOutboxRelayMarks(newPostgresUoW(db, server, cfg))
		},
		// The Dispatcher's claim and mark, one round trip each.
		func(db *bun.DB, server *postgres.ServerIdentity, cfg Config) ports.OutboxClaims {
			return postgres.NewOutboxClaims(newPostgresUoW(db, server, cfg))
		},
	),
	fx.Invoke(func(m *prometheus.Metrics, db *bun.DB) { m.WatchDB(db.DB, "once") }),
)

// newPostgresUoW is a unit of work on the pool whose failures tell server
// when the server went away: whichever part of the process meets a
// failover first (an API request, the relay's mark, the Dispatcher's
// claim), the completed-response cache hears of it.
func newPostgresUoW(db *bun.DB, server *postgres.ServerIdentity, cfg Config) *postgres.UnitOfWork {
	return postgres.NewUnitOfWork(db, postgres.WithAcquireTimeout(cfg.DBAcquireTimeout), postgres.WithServerIdentity(server))
}

// startupConnectTimeout bounds the first connection: a server that does not
// answer (a firewall dropping packets) fails start-up with a message
// instead of hanging it.
const startupConnectTimeout = 10 * time.Second

// DBPool is the pool configuration of cfg.
func (c Config) DBPool() postgres.Pool {
	return postgres.Pool{MaxConns: c.DBMaxConns, MaxIdle: c.DBMaxIdle, AcquireTimeout: c.DBAcquireTimeout, TransactionPooler: c.TransactionPooler()}
}

// postgresReach is how DATABASE_URL reaches PostgreSQL, as the
// configuration says or as found at start.
type postgresReach struct {
	// transactionPooler: through a pooler in transaction mode.
	transactionPooler bool
}

func newPostgresDB(lc fx.Lifecycle, cfg Config, server *postgres.ServerIdentity, t Tracing, log *slog.Logger) (*bun.DB, postgresReach, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startupConnectTimeout)
	defer cancel()
	pool := cfg.DBPool()
	pool.Server = server
	if !pool.TransactionPooler {
		var err error
		if pool, err = findPooler(ctx, pool, cfg, log); err != nil {
			return nil, postgresReach{}, err
		}
	}
	db, err := postgres.OpenPool(ctx, cfg.DatabaseURL, pool, t.postgres()...)
	if err != nil {
		return nil, postgresReach{}, err
	}
	log.Info("using PostgreSQL", slog.String("component", "postgres"), slog.Int("max_conns", cfg.DBMaxConns), slog.Duration("acquire_timeout", cfg.DBAcquireTimeout),
		slog.Bool("transaction_pooler", pool.TransactionPooler), slog.Bool("prepared_statements", !pool.TransactionPooler || pool.PoolerPrepares))
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return db.Close() }})
	return db, postgresReach{transactionPooler: pool.TransactionPooler}, nil
}

// findPooler finds out whether DATABASE_URL goes through a pooler in
// transaction mode although ONCE_DATABASE_POOLER does not say pgbouncer,
// and if it does, returns pool as that pooler needs it: left empty, the
// setting gets what pgbouncer gives (no statement prepared on the server,
// else the next transaction's server connection lacks it and the request
// fails), with a warning that names it; none says that the pooler keeps
// prepared statements itself, so they are kept. Either way the server is
// then confirmed before a replay from memory (Pool.Server).
//
// Adapting rather than refusing to start: the mode it switches to is the
// one ONCE_DATABASE_POOLER=pgbouncer selects, tested statement by
// statement, and costs only the parse a cached statement saves, while a
// refusal would turn a pooler put in front of a running deployment into an
// outage at its next restart.
func findPooler(ctx context.Context, pool postgres.Pool, cfg Config, log *slog.Logger) (postgres.Pool, error) {
	found, err := postgres.FindTransactionPooler(ctx, cfg.DatabaseURL)
	if err != nil || !found {
		return pool, err
	}
	pool.TransactionPooler = true
	pool.PoolerPrepares = cfg.DatabasePooler == PoolerNone
	if pool.PoolerPrepares {
		log.Info("DATABASE_URL goes through a pooler in transaction mode, and ONCE_DATABASE_POOLER=none says it keeps prepared statements: they are kept",
			slog.String("component", "postgres"))
	} else {
		log.Warn("DATABASE_URL goes through a pooler in transaction mode (transactions of one connection ran in different server sessions, or of two in one) "+
			"but ONCE_DATABASE_POOLER is empty: statements are sent unprepared, as with ONCE_DATABASE_POOLER=pgbouncer; "+
			"set ONCE_DATABASE_POOLER=pgbouncer to say so, or none if the pooler keeps prepared statements (PgBouncer 1.21+ with max_prepared_statements)",
			slog.String("component", "postgres"))
	}
	return pool, nil
}

// newPostgresSignal wakes dispatchers in every process: an in-process wake
// plus one coalesced NOTIFY after commit (through the pool: a NOTIFY is a
// statement like any other, also through a transaction pooler), and a
// LISTEN connection to cfg.ListenURL, which must be PostgreSQL itself.
func newPostgresSignal(lc fx.Lifecycle, db *bun.DB, reach postgresReach, cfg Config, log *slog.Logger) ports.DispatchSignal {
	if cfg.Dispatcher && reach.transactionPooler && cfg.DatabaseListenURL == "" {
		log.Warn("the Dispatcher LISTENs through the pooler in transaction mode that DATABASE_URL reaches, "+
			"which passes on no notification, so events wait for ONCE_DISPATCH_POLL_INTERVAL; "+
			"set ONCE_DATABASE_LISTEN_URL to PostgreSQL itself", slog.String("component", "postgres"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := postgres.NewSignal(ctx, db, cfg.ListenURL(), log)
	lc.Append(fx.Hook{OnStop: func(context.Context) error {
		cancel()
		return s.Close()
	}})
	return s
}
