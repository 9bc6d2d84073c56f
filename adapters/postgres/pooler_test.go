package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/pgbouncer"
	"github.com/oncehq/once/testsupport/pgtest"
)

// Through PgBouncer in transaction mode with one server connection, two
// client connections of the pool run the statements that decide
// correctness one after the other on that same server connection: the
// idempotency claim, the Dispatcher's claim and mark batches, the NOTIFY.
// With TransactionPooler they are sent unprepared and all work. Without it
// pgx prepares each under a name per client connection, and the second
// client connection finds the name taken on the server connection (or, with
// more server connections, missing): that is logged, for comparison.
func TestThroughATransactionPoolerEveryStatementWorks(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	bouncer := pgbouncer.Start(t, pgbouncer.Config{Target: "127.0.0.1:5432", Users: []string{db.AppRole}, PoolSize: 1})
	dsn := bouncer.DSN(t, db.AppDSN)
	ctx := context.Background()

	run := func(t *testing.T, pooler bool) error {
		pool, err := postgres.OpenPool(ctx, dsn, postgres.Pool{MaxConns: 2, MaxIdle: 2, AcquireTimeout: 10 * time.Second, TransactionPooler: pooler})
		require.NoError(t, err)
		defer pool.Close()
		uow := postgres.NewUnitOfWork(pool)
		ws := seedWorkspace(t, uow, t0.Add(48*time.Hour))
		// Each round on the other client connection: the one just used
		// is held (outside any transaction, so it holds no server
		// connection) while the round runs.
		var held bun.Conn
		for round := range 4 {
			if _, err := claimOnce(uow, freshRecord(ws)); err != nil {
				return err
			}
			claims := postgres.NewOutboxClaims(uow)
			claim, err := claims.ClaimDue(ctx, ws, "owner", t0.Add(time.Hour), time.Minute, 100, 10)
			if err != nil {
				return err
			}
			if _, err := claims.MarkDispatched(ctx, ws, "owner", eventIDs(claim.Events), t0.Add(time.Hour)); err != nil {
				return err
			}
			if _, err := pool.ExecContext(ctx, `SELECT pg_notify('once_outbox', '')`); err != nil {
				return err
			}
			if round > 0 {
				_ = held.Close()
			}
			if held, err = pool.Conn(ctx); err != nil {
				return err
			}
		}
		return held.Close()
	}

	t.Run("without TransactionPooler", func(t *testing.T) {
		t.Logf("pgx's statement cache through the pooler: %v", run(t, false))
	})
	t.Run("with TransactionPooler", func(t *testing.T) {
		require.NoError(t, run(t, true))
	})
}

// PostgreSQL itself and PgBouncer in session mode give each connection a
// server session of its own for its life; PgBouncer in transaction mode
// does not, whatever its number of server connections.
func TestFindTransactionPoolerTellsTransactionModeFromTheRest(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	find := func(t *testing.T, dsn string) bool {
		found, err := postgres.FindTransactionPooler(ctx, dsn)
		require.NoError(t, err)
		return found
	}
	assert.False(t, find(t, db.AppDSN), "PostgreSQL itself")
	for _, size := range []int{1, 4} {
		bouncer := pgbouncer.Start(t, pgbouncer.Config{Target: "127.0.0.1:5432", Users: []string{db.AppRole}, PoolSize: size})
		assert.True(t, find(t, bouncer.DSN(t, db.AppDSN)), "transaction mode, %d server connections", size)
	}
	session := pgbouncer.Start(t, pgbouncer.Config{Target: "127.0.0.1:5432", Users: []string{db.AppRole}, PoolSize: 4, PoolMode: "session"})
	assert.False(t, find(t, session.DSN(t, db.AppDSN)), "session mode")
}

func eventIDs(events []model.OutboxEvent) []uuid.UUID {
	ids := make([]uuid.UUID, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return ids
}

// PgBouncer before 1.21 (Debian's is 1.18) passes a client's prepared
// statement names to whichever server connection serves the transaction:
// a statement prepared in one transaction is missing, or taken by another
// client, in the next, and the probe says so, whatever the pool's size.
// The control: a connection to PostgreSQL itself keeps them (as would a
// PgBouncer 1.21+ with max_prepared_statements, which Debian lacks here).
func TestPoolerKeepsPreparedStatementsIsFalseThroughAnOldPgBouncer(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	keeps, err := postgres.PoolerKeepsPreparedStatements(ctx, db.AppDSN)
	require.NoError(t, err)
	assert.True(t, keeps, "PostgreSQL itself")
	for _, size := range []int{1, 4} {
		bouncer := pgbouncer.Start(t, pgbouncer.Config{Target: "127.0.0.1:5432", Users: []string{db.AppRole}, PoolSize: size})
		keeps, err := postgres.PoolerKeepsPreparedStatements(ctx, bouncer.DSN(t, db.AppDSN))
		require.NoError(t, err)
		assert.False(t, keeps, "%d server connections", size)
	}
}
