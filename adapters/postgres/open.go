// Package postgres is the PostgreSQL adapter of once: bun on the pgx driver,
// row-level security on every tenant table, and the reviewed SQL that
// idempotency and the outbox depend on.
//
// The service connects as an application login role (member of once_app): it
// owns no table and has no BYPASSRLS, and every transaction sets
// app.workspace_id as its first statement (UnitOfWork). Migrations run as a
// separate owner role (Migrate); roles and the database come from Bootstrap.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Pool bounds the connections one process keeps to PostgreSQL. It is
// database/sql's pool (bun runs on database/sql): MaxConns is a hard limit,
// so a storm of requests against one process queues inside the process
// instead of opening connection after connection until the cluster's
// max_connections is gone for everybody.
//
// Why database/sql's pool and not pgxpool under it: bun needs a *sql.DB,
// and stdlib.OpenDBFromPool still puts database/sql's own pool on top, so
// there would be two pools to size and neither has an acquire timeout of its
// own (both wait on the context). One pool, and the wait bounded where a
// transaction takes its connection (UnitOfWork, AcquireTimeout), is simpler.
type Pool struct {
	// MaxConns is the most connections open at once, in use or idle.
	MaxConns int
	// MaxIdle is the most connections kept open while unused (at most
	// MaxConns). Keeping them avoids a reconnect, the costliest thing a
	// request can do, at every burst.
	MaxIdle int
	// AcquireTimeout is how long a transaction waits for a free connection
	// before it gives up with domain.CodeUnavailable and a Retry-After
	// (UnitOfWork). It is not passed to Open: database/sql waits on
	// contexts only, so the unit of work applies it.
	AcquireTimeout time.Duration
	// TransactionPooler says that the DSN reaches PostgreSQL through a
	// pooler in transaction mode (PgBouncer's pool_mode=transaction), which
	// hands each transaction whichever server connection is free: no
	// statement may rely on a named prepared statement (see
	// withoutPreparedStatements), and the pooler may move to another
	// server under connections that stay up, so Server confirms which
	// server answers before anything is answered from memory
	// (ServerIdentity.Confirm).
	TransactionPooler bool
	// PoolerPrepares says that the transaction pooler keeps named prepared
	// statements for its clients itself (PgBouncer 1.21 and later with
	// max_prepared_statements): pgx's statement cache is kept.
	PoolerPrepares bool
	// Server, if set, learns which server each new connection reached
	// (server_identity.go).
	Server *ServerIdentity
	// StepLockWait is how long a statement in a batch of job steps waits
	// for a lock before its step is sent alone (step_groups.go); 0 is
	// DefaultStepLockWait.
	StepLockWait time.Duration
}

// The default pool, sized for a small (2-core) PostgreSQL: a database that
// size does its best work with a handful of busy connections, and ten per
// process leave room for several processes under the default
// max_connections of 100. See docs/configuration.md, on sizing the pool.
const (
	DefaultMaxConns       = 10
	DefaultMaxIdle        = 10
	DefaultAcquireTimeout = time.Second
)

const (
	// connMaxIdleTime closes connections nobody used for a while, so a
	// process shrinks back after a burst.
	connMaxIdleTime = 5 * time.Minute
	// connMaxLifetime renews connections now and then, so a process
	// follows a failover or a changed role setting without a restart.
	connMaxLifetime = 30 * time.Minute
)

// DefaultPool is the pool Open uses.
func DefaultPool() Pool {
	return Pool{MaxConns: DefaultMaxConns, MaxIdle: DefaultMaxIdle, AcquireTimeout: DefaultAcquireTimeout}
}

// Open connects to dsn with the pgx driver and the default pool, and checks
// the connection. The caller closes the returned *bun.DB.
func Open(ctx context.Context, dsn string) (*bun.DB, error) {
	return OpenPool(ctx, dsn, DefaultPool())
}

// OpenPool connects to dsn with the pgx driver, bounded by pool, and checks
// the connection. A server that cannot be reached is a *ConnectError that
// names its address and never the password.
func OpenPool(ctx context.Context, dsn string, pool Pool, opts ...OpenOption) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgconn's parse errors quote the DSN with the password masked.
		return nil, fmt.Errorf("postgres: %w", err)
	}
	for _, opt := range opts {
		opt(cfg)
	}
	cfg.OnNotice = markUnconfirmedCommits(cfg.OnNotice)
	if pool.TransactionPooler && !pool.PoolerPrepares {
		withoutPreparedStatements(cfg)
	}
	// pgx's stdlib connections, wrapped to save round trips
	// (pipelined_conn.go).
	sqldb := sql.OpenDB(pipelinedConnector{Connector: stdlib.GetConnector(*cfg), server: pool.Server, groups: newPoolGroups(pool.StepLockWait)})
	maxConns := pool.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(min(max(pool.MaxIdle, 0), maxConns))
	sqldb.SetConnMaxIdleTime(connMaxIdleTime)
	sqldb.SetConnMaxLifetime(connMaxLifetime)
	db := bun.NewDB(sqldb, pgdialect.New())
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, &ConnectError{Addr: address(cfg.Config), Database: cfg.Database, User: cfg.User, Err: err}
	}
	if pool.Server != nil {
		var through *UnitOfWork
		if pool.TransactionPooler {
			through = NewUnitOfWork(db, WithAcquireTimeout(pool.AcquireTimeout))
		}
		pool.Server.confirmThrough(through)
	}
	return db, nil
}

// withoutPreparedStatements makes the pool's connections work through a
// pooler in transaction mode. pgx's default (cache_statement) prepares
// every statement with arguments under a name, once per connection, and
// runs it by that name later: through PgBouncer 1.18 in transaction mode
// the next transaction of the same client connection runs on another
// server connection, where the name does not exist (26000 prepared
// statement "stmtcache_..." does not exist). exec sends each statement
// with its arguments as an unnamed statement, parsed, bound and run in the
// one round trip of its Sync, which never outlives the transaction; what
// it costs is the parse PostgreSQL saved on a cached statement. Every
// statement of this adapter works in it (the uuids are encoded as
// pgtype.UUID: TestParameterisedStatementsWorkInEveryExecMode). A mode the
// DSN chose itself (default_query_exec_mode=simple_protocol, ...) is kept:
// only cache_statement names statements.
//
// Nothing else relies on the session through the pool: the workspace is
// set with set_config(..., true) inside each transaction (and the
// Dispatcher's claim batch is one implicit transaction), the advisory locks
// of the idempotency claim and of Migrate are transaction-scoped, and
// LISTEN has a connection of its own (Signal, ONCE_DATABASE_LISTEN_URL).
// Bootstrap's session-level lock and migrations go direct, as the
// superuser and the owner.
func withoutPreparedStatements(cfg *pgx.ConnConfig) {
	if cfg.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	cfg.StatementCacheCapacity = 0
}

// ConnectError says that PostgreSQL could not be reached or refused the
// connection, in one line an operator can act on: the address, the
// database and the role, never the password.
type ConnectError struct {
	Addr     string
	Database string
	User     string
	Err      error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("database unreachable at %s (database %q, user %q): %s", e.Addr, e.Database, e.User, connectCause(e.Err))
}

func (e *ConnectError) Unwrap() error { return e.Err }

// address is host:port of the first server of cfg, or the socket directory.
func address(cfg pgconn.Config) string {
	if strings.HasPrefix(cfg.Host, "/") {
		return cfg.Host
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// connectCause is the innermost useful reason of a failed connect, on one
// line: pgx joins the errors of every attempt (each host, with and without
// TLS) into several lines that all say the same.
func connectCause(err error) string {
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	var sysErr *os.SyscallError
	switch {
	case errors.As(err, &pgErr):
		return pgErr.Message + " (SQLSTATE " + pgErr.Code + ")"
	case errors.As(err, &dnsErr):
		return dnsErr.Error()
	case errors.As(err, &sysErr):
		return sysErr.Err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimSuffix(strings.TrimSpace(line), ":")
}
