package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
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
	"github.com/oncehq/once/testsupport/testkit"
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

	endSessions(t, db.AppRole)

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
		// The server is a standby now (a demoted leader): no longer the
		// primary the process wrote to.
		"read-only transaction (25006)": &pgconn.PgError{Code: "25006"},
		"read-only, as mapped":          postgres.MapError(&pgconn.PgError{Code: "25006"}, "store"),
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

// primaryEvents records what a ServerIdentity tells its observer.
type primaryEvents struct {
	mu     sync.Mutex
	events []string
}

func (p *primaryEvents) PrimaryLost() { p.add("lost") }
func (p *primaryEvents) PrimaryFound(changed bool) {
	if changed {
		p.add("found another")
	} else {
		p.add("found again")
	}
}

func (p *primaryEvents) add(e string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, e)
}

// A process says once when it lost its database server (the first dead
// connection of a failover or restart, not every one) and once when a new
// connection found a server again, and whether it is another one (a
// promoted standby, another host): in its log and to its metrics.
func TestLosingAndFindingTheServerIsLoggedAndObservedOnce(t *testing.T) {
	t.Parallel()
	var out testkit.LogBuffer
	events := &primaryEvents{}
	server := postgres.NewServerIdentity()
	server.Report(slog.New(slog.NewJSONHandler(&out, nil)), events)

	postgres.ObserveServer(server, "7001", "00000001", "10.0.0.1:5432")
	postgres.ObserveServer(server, "7001", "00000001", "10.0.0.1:5432")
	assert.Empty(t, events.events, "the first server is the baseline, not news")

	// The leader's postmaster killed: every connection dies, it comes back in place.
	postgres.LoseServer(server)
	postgres.LoseServer(server)
	postgres.ObserveServer(server, "7001", "00000001", "10.0.0.1:5432")
	postgres.ObserveServer(server, "7001", "00000001", "10.0.0.1:5432")
	// A failover: the next connection reaches the promoted standby.
	postgres.LoseServer(server)
	postgres.ObserveServer(server, "7001", "00000002", "10.0.0.2:5432")
	// A switchover seen first by a new connection, before any died.
	postgres.ObserveServer(server, "7001", "00000003", "10.0.0.1:5432")

	assert.Equal(t, []string{"lost", "found again", "lost", "found another", "found another"}, events.events)
	logged := out.String()
	assert.Equal(t, 2, strings.Count(logged, `"msg":"lost the database server`), logged)
	assert.Equal(t, 3, strings.Count(logged, `"msg":"found the database server`), logged)
	assert.Contains(t, logged, `"server":"10.0.0.2:5432"`)
	assert.Contains(t, logged, `"timeline":"00000002"`)
}
