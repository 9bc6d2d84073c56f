package postgres_test

import (
	"context"
	"database/sql"
	"io"
	"net"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// identityPool is a pool of conns connections to db's application role
// that reports to a ServerIdentity, and its unit of work.
func identityPool(t *testing.T, db *pgtest.DB, conns int) (*postgres.ServerIdentity, *bun.DB, *postgres.UnitOfWork) {
	t.Helper()
	server := postgres.NewServerIdentity()
	pool, err := postgres.OpenPool(context.Background(), db.AppDSN, postgres.Pool{
		MaxConns: conns, MaxIdle: conns, AcquireTimeout: 10 * time.Second, Server: server,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	return server, pool, postgres.NewUnitOfWork(pool, postgres.WithServerIdentity(server))
}

// Every connection of a pool asks its server who it is, as the
// application role; connections to one server leave the epoch where it
// started.
func TestConnectionsToOneServerKeepTheEpoch(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	server, _, uow := identityPool(t, db, 4)
	ws := seedWorkspace(t, uow, t0.Add(48*time.Hour))

	// Four transactions held open at once: four connections.
	var wg sync.WaitGroup
	var all sync.WaitGroup
	all.Add(4)
	for range 4 {
		wg.Go(func() {
			_ = uow.Transact(context.Background(), ws, func(context.Context, ports.Tx) error {
				all.Done()
				all.Wait()
				return nil
			})
		})
	}
	wg.Wait()

	system, timeline, addr := postgres.ServerOf(server)
	assert.Regexp(t, regexp.MustCompile(`^[0-9]+$`), system, "system identifier")
	assert.Regexp(t, regexp.MustCompile(`^[0-9A-F]{8}$`), timeline, "timeline")
	assert.Equal(t, "127.0.0.1:5432", addr)
	assert.Zero(t, server.Epoch())
}

// Another cluster, another timeline of the same cluster (a promoted
// standby, a restore) or another address moves the epoch on; the same
// server again does not.
func TestAnotherServerMovesTheEpoch(t *testing.T) {
	t.Parallel()
	server := postgres.NewServerIdentity()
	postgres.ObserveServer(server, "7001", "00000001", "10.0.0.1:5432")
	postgres.ObserveServer(server, "7001", "00000001", "10.0.0.1:5432")
	assert.Zero(t, server.Epoch(), "the first server is the baseline")

	postgres.ObserveServer(server, "7001", "00000002", "10.0.0.2:5432") // the standby, promoted
	assert.Equal(t, uint64(1), server.Epoch())
	postgres.ObserveServer(server, "7001", "00000002", "10.0.0.2:5432")
	assert.Equal(t, uint64(1), server.Epoch())
	postgres.ObserveServer(server, "7001", "00000003", "10.0.0.2:5432") // restored in place
	assert.Equal(t, uint64(2), server.Epoch())
	postgres.ObserveServer(server, "8002", "00000003", "10.0.0.2:5432") // another cluster
	assert.Equal(t, uint64(3), server.Epoch())
}

// A connection that died under the process (its server restarted or
// failed over; here an administrator ended every session) moves the epoch
// on: behind a pooler it may be the only sign of a failover. A statement
// that fails, or a caller that gives up, does not.
func TestDeadConnectionMovesTheEpochAndFailedStatementsDoNot(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	server, _, uow := identityPool(t, db, 1)
	ws := seedWorkspace(t, uow, t0.Add(48*time.Hour))

	err := uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		_, err := tx.Stores().Get(ctx, newID(t))
		return err
	})
	require.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))
	err = uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		_, err := postgres.TxDB(tx.(*postgres.Tx)).ExecContext(ctx, "SELECT 1/0")
		return err
	})
	require.Error(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	err = uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		cancel()
		_, err := postgres.TxDB(tx.(*postgres.Tx)).ExecContext(ctx, "SELECT pg_sleep(10)")
		return err
	})
	require.Error(t, err)
	require.Zero(t, server.Epoch(), "a failed statement moved the epoch")
	// The connection pgx closed on the cancel is replaced: the pool's one
	// connection is alive again, and then its session is ended.
	transact(t, uow, ws, func(context.Context, ports.Tx) error { return nil })
	require.Zero(t, server.Epoch())

	super, err := sql.Open("pgx", pgtest.SuperuserDSN())
	require.NoError(t, err)
	defer super.Close()
	_, err = super.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, db.AppRole)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, super.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, db.AppRole).Scan(&n))
		return n == 0
	}, 30*time.Second, 20*time.Millisecond, "the terminated sessions did not end")

	transact(t, uow, ws, func(context.Context, ports.Tx) error { return nil })
	assert.Positive(t, server.Epoch())
}

// Which failures of a transaction say its server went away.
func TestServerWentAwayOnlyWhenTheServerEndOfAConnectionIsGone(t *testing.T) {
	t.Parallel()
	gone := map[string]error{
		"admin shutdown (57P01)":             &pgconn.PgError{Code: "57P01"},
		"PgBouncer's server conn crashed":    &pgconn.PgError{Code: "08P01", Message: "server conn crashed?"},
		"connection reset":                   &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
		"connection refused, as mapped":      postgres.MapError(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, "store"),
		"a restart mid-statement, as mapped": postgres.MapError(&pgconn.PgError{Code: "57P01"}, "store"),
		"unexpected EOF":                     io.ErrUnexpectedEOF,
	}
	for name, err := range gone {
		assert.True(t, postgres.ServerWentAway(err), name)
	}
	stayed := map[string]error{
		"division by zero":  postgres.MapError(&pgconn.PgError{Code: "22012"}, "store"),
		"statement timeout": postgres.MapError(&pgconn.PgError{Code: "57014"}, "store"),
		"serialization":     &pgconn.PgError{Code: "40001"},
		"caller gave up":    context.Canceled,
		"deadline":          context.DeadlineExceeded,
		"not found":         domain.Errorf(domain.CodeNotFound, "store not found"),
	}
	for name, err := range stayed {
		assert.False(t, postgres.ServerWentAway(err), name)
	}
}
