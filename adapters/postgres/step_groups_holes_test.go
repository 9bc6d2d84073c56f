package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
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

// poolOf is a pool of conns connections whose batches of job steps wait
// lockWait for a lock.
func poolOf(conns int, lockWait time.Duration) postgres.Pool {
	return postgres.Pool{MaxConns: conns, MaxIdle: conns, AcquireTimeout: 10 * time.Second, StepLockWait: lockWait}
}

// A step whose first reads wait for a lock (a table a migration holds)
// longer than a batch's lock wait reads alone, on its own connection, and
// waits there as before batches; once the lock goes, it ends as any
// other. Its reads are the same statements the batch sent: sent again on
// a connection whose statements the failed batch made pgx forget (or on
// one that never prepared them), they are prepared again.
func TestAStepWhoseReadsWaitForALockReadsAloneAndEnds(t *testing.T) {
	tracer := &lockWaits{}
	db, pool, stores, ops := startedVerificationsTraced(t, 2, poolOf(2, time.Millisecond), tracer)
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

// A step whose own connection died while it waited (the server restarted,
// an administrator ended the session) and whose reads went in another
// step's batch has sent nothing on it: before batches, its first round
// trip found the connection dead and Transact ran it again on another
// (nothing of it committed). Its commit finds it now: the batch it leads
// fails before any of it ran, which is no unknown outcome: Transact runs
// the step again on another connection, and it ends.
func TestAStepWhoseConnectionDiedAfterItsReadsInAnothersBatchRunsAgain(t *testing.T) {
	tracer := &lockWaits{}
	db, pool, stores, ops := startedVerificationsTraced(t, 3, poolOf(5, time.Hour), tracer)
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()
	before := len(tracer.read())

	// The first end's reads wait for the webhook endpoints' table: the
	// second's and the third's wait for them, and go together next, on
	// the second's connection.
	lock, err := db.Owner.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = lock.ExecContext(ctx, "LOCK TABLE webhook_endpoints IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	errs := make([]error, 3)
	var first, wg sync.WaitGroup
	ends(ctx, uow, &first, errs, ops, 0)
	require.Eventually(t, func() bool { return len(tracer.read()) > before }, time.Minute, time.Millisecond,
		"the first end's reads are out")
	ends(ctx, uow, &first, errs, ops, 1)
	require.Eventually(t, func() bool {
		waiting, err := postgres.ReadsWaiting(ctx, pool.DB)
		return err == nil && waiting == 1
	}, time.Minute, time.Millisecond, "the second end's reads wait")

	read, proceed := make(chan struct{}), make(chan struct{})
	var readOnce sync.Once
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[2] = uow.Transact(ports.WithRefusalsAtCommit(ctx), ops[2].WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.PrefetchJobEnd(ctx, ops[2].ID); err != nil {
				return err
			}
			readOnce.Do(func() { close(read) })
			<-proceed
			store, err := tx.Stores().Get(ctx, ops[2].ResourceID)
			if err != nil {
				return err
			}
			store.Status, store.UpdatedAt = model.StoreVerified, t0.Add(2*time.Second)
			if err := tx.Stores().Update(ctx, store); err != nil {
				return err
			}
			op := ops[2]
			op.Status = model.OperationRunning
			op.Succeed(t0.Add(2 * time.Second))
			return jobs.SaveEnded(ctx, tx, op)
		})
	}()
	require.Eventually(t, func() bool {
		waiting, err := postgres.ReadsWaiting(ctx, pool.DB)
		return err == nil && waiting == 2
	}, time.Minute, time.Millisecond, "the third end's reads wait behind the second's")
	require.NoError(t, lock.Rollback())
	<-read
	require.Equal(t, []int{1, 2}, tracer.read()[before:], "the second's and the third's reads went together")

	// The server ends every session of the pool: the third end's own
	// connection, which sent nothing since, among them.
	first.Wait()
	endSessions(t, db.AppRole)
	close(proceed)
	wg.Wait()

	for i := range errs {
		require.NoError(t, errs[i], "end %d", i)
	}
	requireVerified(t, uow, stores, ops)
}

// heldReads is lockWaits that, armed, holds the next batch of first
// reads at its start until block is closed, saying so on out.
type heldReads struct {
	lockWaits
	armed      atomic.Bool
	out, block chan struct{}
}

func (h *heldReads) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	ctx = h.lockWaits.TraceBatchStart(ctx, conn, data)
	reads := false
	for _, q := range data.Batch.QueuedQueries {
		reads = reads || strings.Contains(q.SQL, "set_config")
	}
	if reads && h.armed.CompareAndSwap(true, false) {
		close(h.out)
		<-h.block
	}
	return ctx
}

// A table lock (a migration's) holds up every step's first reads: a
// batch of them gives up on it once, after its lock wait, and its steps
// all read alone on their own connections and wait there, as before
// batches, rather than each in turn holding the batch (and every step of
// the pool behind it) for a lock wait of its own.
func TestABatchOfReadsWaitsForATableLockOnce(t *testing.T) {
	const n = 4
	tracer := &heldReads{out: make(chan struct{}), block: make(chan struct{})}
	// Without prepared statements (as through a transaction pooler), so
	// that every statement waits for a lock inside its batch's
	// transaction, under its lock_timeout, not in a Parse before it.
	config := poolOf(8, time.Millisecond)
	config.TransactionPooler = true
	db, pool, stores, ops := startedVerificationsTraced(t, n, config, tracer)
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()

	tracer.armed.Store(true)
	errs := make([]error, n)
	var wg sync.WaitGroup
	ends(ctx, uow, &wg, errs, ops, 0)
	<-tracer.out
	ends(ctx, uow, &wg, errs, ops, 1, 2, 3)
	require.Eventually(t, func() bool {
		waiting, err := postgres.ReadsWaiting(ctx, pool.DB)
		return err == nil && waiting == n-1
	}, time.Minute, time.Millisecond, "the other ends' reads wait for the batch out")
	lock, err := db.Owner.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = lock.ExecContext(ctx, "LOCK TABLE operations IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	close(tracer.block)

	require.Eventually(t, func() bool { return lockWaiters(ctx, t, db) == n }, time.Minute, time.Millisecond,
		"every end's reads wait alone for the lock")
	require.Equal(t, int32(2), tracer.n.Load(), "each batch gave up on the lock once")
	require.NoError(t, lock.Rollback())
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "end %d", i)
	}
	requireVerified(t, uow, stores, ops)
}

// A step whose own connection closed after its reads (it led a read batch
// whose connection was lost after the reads came back) does not lead a
// commit batch on it, which would fail every member with an unknown
// outcome: nothing of the step ran there, so it runs again on another
// connection and ends.
func TestAStepWhoseConnectionClosedAfterItsReadsRunsAgain(t *testing.T) {
	db := pgtest.New(t)
	pool, err := postgres.OpenPool(context.Background(), db.AppDSN, poolOf(4, 0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()
	store, op := verification(t, uow)
	require.NoError(t, startJob(ctx, uow, op))

	runs := 0
	err = uow.Transact(ports.WithRefusalsAtCommit(ctx), op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		runs++
		if err := tx.PrefetchJobEnd(ctx, op.ID); err != nil {
			return err
		}
		if runs == 1 {
			require.NoError(t, postgres.CloseConnOf(ctx, tx.(*postgres.Tx)))
		}
		s, err := tx.Stores().Get(ctx, store.ID)
		if err != nil {
			return err
		}
		s.Status, s.UpdatedAt = model.StoreVerified, t0.Add(2*time.Second)
		if err := tx.Stores().Update(ctx, s); err != nil {
			return err
		}
		ended := op
		ended.Succeed(t0.Add(2 * time.Second))
		return jobs.SaveEnded(ctx, tx, ended)
	})
	require.NoError(t, err)
	require.Equal(t, 2, runs, "the step ran again on another connection")
	requireVerified(t, uow, []model.Store{store}, []model.Operation{op})
}
