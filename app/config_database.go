package app

import (
	"errors"
	"slices"
	"time"

	"github.com/oncehq/once/adapters/postgres"
)

// DatabaseConfig says where PostgreSQL is and how a process pools its
// connections; no DATABASE_URL means the embedded memory store.
type DatabaseConfig struct {
	DatabaseURL string `env:"DATABASE_URL"`
	// MigrateDatabaseURL is the owner role `once migrate` connects as.
	MigrateDatabaseURL string `env:"ONCE_MIGRATE_DATABASE_URL"`
	// DatabasePooler says what DatabaseURL reaches: pgbouncer for a pooler
	// in transaction mode, which needs statements without server-side
	// preparation (docs/deploy.md); none for PostgreSQL itself, or a
	// pooler that keeps prepared statements; empty: found out at start
	// (findPooler).
	DatabasePooler string `env:"ONCE_DATABASE_POOLER"`
	// DatabaseListenURL is the connection a Dispatcher LISTENs on for
	// wake-ups, which must reach PostgreSQL itself (LISTEN holds a
	// session); empty means DatabaseURL.
	DatabaseListenURL string `env:"ONCE_DATABASE_LISTEN_URL"`
	// The pool of every process: at most DBMaxConns pooled connections,
	// plus one LISTEN connection in a process that runs a Dispatcher. A
	// transaction waits at most DBAcquireTimeout for a free one, then gets
	// 503 UNAVAILABLE with Retry-After.
	DBMaxConns       int           `env:"ONCE_DB_MAX_CONNS"`
	DBMaxIdle        int           `env:"ONCE_DB_MAX_IDLE"`
	DBAcquireTimeout time.Duration `env:"ONCE_DB_ACQUIRE_TIMEOUT"`
}

func defaultDatabaseConfig() DatabaseConfig {
	return DatabaseConfig{DBMaxConns: postgres.DefaultMaxConns, DBMaxIdle: postgres.DefaultMaxIdle, DBAcquireTimeout: postgres.DefaultAcquireTimeout}
}

// Poolers in front of PostgreSQL (ONCE_DATABASE_POOLER).
const (
	PoolerNone      = "none"
	PoolerPgBouncer = "pgbouncer"
)

// Embedded reports whether the service runs on the memory adapters.
func (c DatabaseConfig) Embedded() bool { return c.DatabaseURL == "" }

// TransactionPooler says whether DatabaseURL reaches PostgreSQL through a
// pooler in transaction mode.
func (c DatabaseConfig) TransactionPooler() bool { return c.DatabasePooler == PoolerPgBouncer }

// ListenURL is the connection a Dispatcher LISTENs on.
func (c DatabaseConfig) ListenURL() string {
	if c.DatabaseListenURL != "" {
		return c.DatabaseListenURL
	}
	return c.DatabaseURL
}

// DBPool is the pool configuration.
func (c DatabaseConfig) DBPool() postgres.Pool {
	return postgres.Pool{MaxConns: c.DBMaxConns, MaxIdle: c.DBMaxIdle, AcquireTimeout: c.DBAcquireTimeout, TransactionPooler: c.TransactionPooler()}
}

// Validate checks the pooler and the pool.
func (c DatabaseConfig) Validate() error {
	return errors.Join(
		invalidIf(!slices.Contains([]string{"", PoolerNone, PoolerPgBouncer}, c.DatabasePooler), "ONCE_DATABASE_POOLER=%q must be empty, none or pgbouncer (a pooler in transaction mode)", c.DatabasePooler),
		invalidIf(c.Embedded() && (c.DatabasePooler != "" || c.DatabaseListenURL != ""), "ONCE_DATABASE_POOLER and ONCE_DATABASE_LISTEN_URL need DATABASE_URL"),
		invalidIf(outside(c.DBMaxConns, 1, 1000), "ONCE_DB_MAX_CONNS=%d must be between 1 and 1000 (and fit, with every other process, in PostgreSQL's max_connections)", c.DBMaxConns),
		invalidIf(outside(c.DBMaxIdle, 0, c.DBMaxConns), "ONCE_DB_MAX_IDLE=%d must be between 0 and ONCE_DB_MAX_CONNS (%d)", c.DBMaxIdle, c.DBMaxConns),
		invalidIf(c.DBAcquireTimeout <= 0 || c.DBAcquireTimeout > time.Minute, "ONCE_DB_ACQUIRE_TIMEOUT=%s must be positive and at most 1m: a request waits that long for a connection", c.DBAcquireTimeout),
	)
}

func (DatabaseConfig) settings() settingGroup { return databaseSettings }

var databaseSettings = settingGroup{
	title: "Database",
	vars: map[string]setting{
		"DATABASE_URL": {
			help: "PostgreSQL, as the application role; empty: the embedded in-memory store (data lost on exit)",
			doc:  "PostgreSQL as the **application role**. Empty: the embedded in-memory store (logged as such; nothing persists). pgx's URL parameters apply: with a primary and standbys list every host, `postgres://…@db1:5432,db2:5432/once?target_session_attrs=read-write` ([deploy.md](deploy.md#failover))",
		},
		"ONCE_DATABASE_POOLER": {
			help: "pgbouncer: DATABASE_URL goes through a pooler in transaction mode (statements without server-side preparation); none: PostgreSQL itself, or a pooler that keeps prepared statements; empty: found out at start (a transaction pooler gets what pgbouncer gives, with a warning)",
			doc:  "`pgbouncer`: `DATABASE_URL` goes through a pooler in transaction mode, so no statement is prepared on the server ([deploy.md](deploy.md#pgbouncer)); `none`: PostgreSQL itself, or a pooler that keeps prepared statements (PgBouncer 1.21+ with `max_prepared_statements`), which is checked at start: a transaction pooler that does not keep them is treated as `pgbouncer`, with a warning naming it; empty: found out at start, and a pooler in transaction mode is treated as `pgbouncer`, with a warning naming this setting. A check that cannot get its two sessions within 3 s is logged (`could not check for a transaction pooler: …`) and start goes on as the setting says",
		},
		"ONCE_DATABASE_LISTEN_URL": {
			help:       "PostgreSQL itself, for the Dispatcher's LISTEN connection (never through a transaction pooler); empty: DATABASE_URL",
			doc:        "the Dispatcher's one `LISTEN` connection (wake-ups), which must reach PostgreSQL itself, never a transaction pooler",
			docDefault: "`DATABASE_URL`",
		},
		"ONCE_MIGRATE_DATABASE_URL": {
			help: "PostgreSQL as the owner role, which `once migrate` applies the migrations as",
			doc:  "PostgreSQL as the **owner role**, for `once migrate` (direct, not through a transaction pooler).",
		},
		"ONCE_DB_MAX_CONNS": {
			help: "pooled PostgreSQL connections of a process (a Dispatcher holds one more, for LISTEN); a worker's jobs use half at once",
			doc:  "most pooled PostgreSQL connections of one process, in use or idle (see sizing below); a worker's jobs take turns at half of them, whatever `ONCE_WORK_CONCURRENCY`",
		},
		"ONCE_DB_MAX_IDLE": {
			help: "idle connections the pool keeps",
			doc:  "how many of those stay open while idle (at most `ONCE_DB_MAX_CONNS`)",
		},
		"ONCE_DB_ACQUIRE_TIMEOUT": {
			help: "longest wait for a pooled connection, then 503 UNAVAILABLE with Retry-After",
			doc:  "how long a request or job waits for a free pooled connection; then `503 UNAVAILABLE` with `Retry-After: 1`",
		},
	},
}
