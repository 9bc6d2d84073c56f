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
	"github.com/oncehq/once/domain/operations"
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
		// One Signal, one LISTEN connection: it wakes the Dispatchers and
		// the reads waiting for an operation's end alike.
		func(s *postgres.Signal) ports.DispatchSignal { return s },
		func(s *postgres.Signal) ports.OperationEnds { return s },
		// An operation's end wakes the Dispatchers too: it may free the
		// next event of its job's ordering key (dispatch.WakeOnEnds).
		newPostgresUoWs,
		func(newUoW postgresUoWs, signal ports.DispatchSignal, ends ports.OperationEnds) ports.UnitOfWork {
			return operations.AnnounceEnds(dispatch.WakeOnEnds(dispatch.NotifyOnCommit(newUoW(), signal), signal), ends)
		},
		fx.Annotate(func(db *bun.DB) *postgres.Discovery { return postgres.NewDiscovery(db) }, fx.As(new(ports.IdempotencyDiscovery))),
		// The console's sessions, which every process reads: a logout or
		// a revocation through one is obeyed by all.
		func(db *bun.DB) ports.OperatorSessions { return postgres.NewOperatorSessions(db) },
		fx.Annotate(func(db *bun.DB) *postgres.APIKeyDirectory { return postgres.NewAPIKeyDirectory(db) }, fx.As(new(ports.APIKeyDirectory))),
		fx.Annotate(func(db *bun.DB) *postgres.OutboxDiscovery { return postgres.NewOutboxDiscovery(db) }, fx.As(new(ports.OutboxDiscovery)), fx.As(new(ports.OutboxBacklog))),
		// Dispatched events kept in time slices that retention drops whole.
		func(db *bun.DB, cfg RetentionConfig) ports.OutboxPartitions {
			return postgres.NewOutboxPartitions(db, cfg.OutboxPartitionInterval)
		},
		// The retention cleanup of finished operations, tasks and dead
		// letters.
		func(db *bun.DB, newUoW postgresUoWs) ports.Retention {
			return postgres.NewRetention(db, newUoW())
		},
		// Every workspace, for the re-seal of the stored secrets.
		fx.Annotate(func(db *bun.DB) *postgres.SealedSecretWorkspaces { return postgres.NewSealedSecretWorkspaces(db) }, fx.As(new(ports.SealedSecretWorkspaces))),
		// The revoked tokens, the fleet's (sql/028).
		func(db *bun.DB) ports.TokenRevocations { return postgres.NewTokenRevocations(db) },
		// The relay's marks and releases, one round trip per batch.
		func(newUoW postgresUoWs) ports.OutboxRelayMarks {
			return postgres.NewOutboxRelayMarks(newUoW())
		},
		// The Dispatcher's claim and mark, one round trip each.
		func(newUoW postgresUoWs) ports.OutboxClaims {
			return postgres.NewOutboxClaims(newUoW())
		},
	),
	fx.Invoke(func(m *prometheus.Metrics, db *bun.DB) { m.WatchDB(db.DB, "once") }),
	// The server identity logs and counts (once_db_primary_*) when the
	// process loses its server and finds one again: a failover followed
	// without a restart. Set once the metrics exist (they read the
	// database, so they cannot come before the pool); the first server
	// found is the baseline, not news.
	fx.Invoke(func(s *postgres.ServerIdentity, log *slog.Logger, m *prometheus.Metrics) { s.Report(log, m) }),
)

// postgresUoWs makes the units of work of the process on its pool.
type postgresUoWs func() *postgres.UnitOfWork

// newPostgresUoWs makes units of work whose failures tell server when the
// server went away: whichever part of the process meets a failover first
// (an API request, the relay's mark, the Dispatcher's claim), the
// completed-response cache hears of it. A commit the synchronous standby
// did not confirm is logged, with the request or job that made it, and
// counted (once_db_commits_unconfirmed_total).
func newPostgresUoWs(db *bun.DB, server *postgres.ServerIdentity, cfg DatabaseConfig, log *slog.Logger, m *prometheus.Metrics) postgresUoWs {
	return func() *postgres.UnitOfWork {
		return postgres.NewUnitOfWork(db, postgres.WithAcquireTimeout(cfg.DBAcquireTimeout), postgres.WithServerIdentity(server),
			postgres.WithUnconfirmedCommitLog(log, m))
	}
}

// startupConnectTimeout bounds the first connection: a server that does not
// answer (a firewall dropping packets) fails start-up with a message
// instead of hanging it.
const startupConnectTimeout = 10 * time.Second

// postgresReach is how DATABASE_URL reaches PostgreSQL, as the
// configuration says or as found at start.
type postgresReach struct {
	// transactionPooler: through a pooler in transaction mode.
	transactionPooler bool
}

func newPostgresDB(lc fx.Lifecycle, cfg DatabaseConfig, server *postgres.ServerIdentity, t Tracing, log *slog.Logger) (*bun.DB, postgresReach, error) {
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

// poolerProbeTimeout bounds the probes of findPooler, well within
// startupConnectTimeout: each takes two sessions at once, which a full
// session-mode pool or a server one connection below max_connections may
// not give, where the service started before it had the probes.
const poolerProbeTimeout = 3 * time.Second

// findPooler finds out whether DATABASE_URL goes through a pooler in
// transaction mode although ONCE_DATABASE_POOLER does not say pgbouncer,
// and if it does, returns pool as that pooler needs it: left empty, the
// setting gets what pgbouncer gives (no statement prepared on the server,
// else the next transaction's server connection lacks it and the request
// fails), with a warning that names it; none says that the pooler keeps
// prepared statements itself, so they are kept once a probe confirms it
// does (PoolerKeepsPreparedStatements), and sent unprepared, with a
// warning naming pgbouncer, if it does not. Either way the server is then
// confirmed before a replay from memory (Pool.Server).
//
// Adapting rather than refusing to start: the mode it switches to is the
// one ONCE_DATABASE_POOLER=pgbouncer selects, tested statement by
// statement, and costs only the parse a cached statement saves, while a
// refusal would turn a pooler put in front of a running deployment into an
// outage at its next restart. For none the probe has just shown that what
// the setting says of the pooler is untrue, so keeping prepared statements
// would only turn requests into 500s.
//
// A probe that fails (it needs two sessions at once, within
// poolerProbeTimeout) is not fatal: it is logged and start goes on as
// before the probes, as the setting says; a server that cannot be reached
// at all fails the pool's own connection next.
func findPooler(ctx context.Context, pool postgres.Pool, cfg DatabaseConfig, log *slog.Logger) (postgres.Pool, error) {
	ctx, cancel := context.WithTimeout(ctx, poolerProbeTimeout)
	defer cancel()
	found, err := postgres.FindTransactionPooler(ctx, cfg.DatabaseURL)
	if err != nil {
		log.Warn("could not check for a transaction pooler: "+err.Error()+"; going on as ONCE_DATABASE_POOLER says", slog.String("component", "postgres"))
		return pool, nil
	}
	if !found {
		return pool, nil
	}
	pool.TransactionPooler = true
	if cfg.DatabasePooler != PoolerNone {
		log.Warn("DATABASE_URL goes through a pooler in transaction mode (transactions of one connection ran in different server sessions, or of two in one) "+
			"but ONCE_DATABASE_POOLER is empty: statements are sent unprepared, as with ONCE_DATABASE_POOLER=pgbouncer; "+
			"set ONCE_DATABASE_POOLER=pgbouncer to say so, or none if the pooler keeps prepared statements (PgBouncer 1.21+ with max_prepared_statements)",
			slog.String("component", "postgres"))
		return pool, nil
	}
	keeps, err := postgres.PoolerKeepsPreparedStatements(ctx, cfg.DatabaseURL)
	switch {
	case err != nil:
		pool.PoolerPrepares = true
		log.Warn("DATABASE_URL goes through a pooler in transaction mode; could not check whether it keeps prepared statements: "+err.Error()+
			"; they are kept, as ONCE_DATABASE_POOLER=none says", slog.String("component", "postgres"))
	case keeps:
		pool.PoolerPrepares = true
		log.Info("DATABASE_URL goes through a pooler in transaction mode that keeps prepared statements, as ONCE_DATABASE_POOLER=none says: they are kept",
			slog.String("component", "postgres"))
	default:
		log.Warn("DATABASE_URL goes through a pooler in transaction mode that does not keep prepared statements "+
			"(one prepared in a transaction was missing or taken in the next), although ONCE_DATABASE_POOLER=none says it does: "+
			"statements are sent unprepared; set ONCE_DATABASE_POOLER=pgbouncer", slog.String("component", "postgres"))
	}
	return pool, nil
}

// newPostgresSignal wakes dispatchers and the reads waiting for an
// operation's end in every process: an in-process wake
// plus one coalesced NOTIFY after commit (through the pool: a NOTIFY is a
// statement like any other, also through a transaction pooler), and a
// LISTEN connection to cfg.ListenURL, which must be PostgreSQL itself,
// for a process that runs a Dispatcher or answers reads that wait.
func newPostgresSignal(lc fx.Lifecycle, db *bun.DB, reach postgresReach, cfg DatabaseConfig, process ProcessConfig, log *slog.Logger) *postgres.Signal {
	if process.Dispatcher && reach.transactionPooler && cfg.DatabaseListenURL == "" {
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
