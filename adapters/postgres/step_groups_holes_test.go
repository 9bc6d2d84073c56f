package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/pgtest"
)

// lockWaits is groupBatches that also counts the batches that ended
// because a statement waited longer than its lock_timeout (55P03).
type lockWaits struct {
	groupBatches
	n atomic.Int32
}

func (l *lockWaits) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	var pgErr *pgconn.PgError
	if errors.As(data.Err, &pgErr) && pgErr.Code == "55P03" {
		l.n.Add(1)
	}
	l.groupBatches.TraceBatchEnd(ctx, conn, data)
}

// lockWaiters is how many backends of db's database wait for a lock, as
// its superuser sees them (the roles' own do not see others' waits).
func lockWaiters(ctx context.Context, t *testing.T, db *pgtest.DB) int {
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	defer func() { _ = super.Close() }()
	n := 0
	require.NoError(t, super.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
 WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
	return n
}

// startedVerificationsTraced is startedVerifications with the lockWaits
// tracer.
func startedVerificationsTraced(t *testing.T, n int, lockWait time.Duration, conns int) (*pgtest.DB, *bun.DB, *lockWaits, []model.Store, []model.Operation) {
	db := pgtest.New(t)
	tracer := &lockWaits{}
	pool, err := postgres.OpenPool(context.Background(), db.AppDSN,
		postgres.Pool{MaxConns: conns, MaxIdle: conns, AcquireTimeout: 10 * time.Second, StepLockWait: lockWait},
		postgres.WithQueryTracer(tracer))
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	uow := postgres.NewUnitOfWork(pool)
	stores := make([]model.Store, n)
	ops := make([]model.Operation, n)
	for i := range n {
		stores[i], ops[i] = verification(t, uow)
		require.NoError(t, startJob(context.Background(), uow, ops[i]))
	}
	return db, pool, tracer, stores, ops
}

// A step whose first reads wait for a lock (a table a migration holds)
// longer than a batch's lock wait reads alone, on its own connection, and
// waits there as before batches; once the lock goes, it ends as any
// other. Its reads are the same statements the batch sent: sent again on
// a connection whose statements the failed batch made pgx forget (or on
// one that never prepared them), they are prepared again.
func TestAStepWhoseReadsWaitForALockReadsAloneAndEnds(t *testing.T) {
	db, pool, tracer, stores, ops := startedVerificationsTraced(t, 2, time.Millisecond, 2)
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()
	// An end before prepares the end's statements on the connection
	// (prepared outside any transaction, a Parse waits for a table lock
	// without the batch's lock_timeout).
	require.NoError(t, endJob(ctx, uow, ops[1]))

	lock, err := db.Owner.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = lock.ExecContext(ctx, "LOCK TABLE webhook_endpoints IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- endJob(ctx, uow, ops[0]) }()
	var endErr error
	ended := false
	require.Eventually(t, func() bool {
		select {
		case endErr = <-done:
			ended = true
			return true
		default:
		}
		// The batch gave up on the lock: what waits now is the step alone.
		return tracer.n.Load() > 0 && lockWaiters(ctx, t, db) > 0
	}, time.Minute, time.Millisecond, "the step's reads wait alone for the lock")
	require.NoError(t, lock.Rollback())
	if !ended {
		endErr = <-done
	}
	require.NoError(t, endErr)
	requireVerified(t, uow, stores, ops)
}
