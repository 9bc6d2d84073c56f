package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// groupBatches records, for each round trip that commits job steps'
// writes (a batch of UPDATEs ending in COMMIT) and each that reads their
// first rows (SELECTs ending in COMMIT), how many workspaces' steps it
// carried (their set_config).
type groupBatches struct {
	roundTrips
	mu            sync.Mutex
	writes, reads []int
}

func (g *groupBatches) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	writes, commit, steps := false, false, 0
	for _, q := range data.Batch.QueuedQueries {
		writes = writes || strings.Contains(q.SQL, "UPDATE")
		commit = commit || q.SQL == "COMMIT"
		if strings.Contains(q.SQL, "set_config") {
			steps++
		}
	}
	g.mu.Lock()
	switch {
	case writes && commit:
		g.writes = append(g.writes, steps)
	case commit:
		g.reads = append(g.reads, steps)
	}
	g.mu.Unlock()
	return g.roundTrips.TraceBatchStart(ctx, conn, data)
}

func (g *groupBatches) taken() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.writes...)
}

func (g *groupBatches) read() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.reads...)
}

// ends runs endJob for each of ops in a goroutine of its own.
func ends(ctx context.Context, uow ports.UnitOfWork, wg *sync.WaitGroup, errs []error, ops []model.Operation, which ...int) {
	for _, i := range which {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = endJob(ctx, uow, ops[i])
		}()
	}
}

// Job steps that reach their COMMIT while another's batch is out commit
// together in the next one, each in its own workspace (row-level security
// lets a step's UPDATE see its rows only under its own set_config: under
// another's it would find none and refuse itself). One whose write
// refuses itself (an end of an operation another delivery ended) gets
// its refusal, as alone, and the others commit without it.
func TestJobStepsWaitingForACommitCommitTogether(t *testing.T) {
	const n = 5
	db, pool, batches, stores, ops := startedVerifications(t, n, time.Hour)
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()
	// Another delivery of job 3 ended it already.
	require.NoError(t, endJob(ctx, uow, ops[3]))
	before := len(batches.taken())

	// The first end's batch waits for a lock on its operation's row (for
	// an hour at most: the pool's StepLockWait).
	lock, err := db.Owner.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = lock.ExecContext(ctx, "SELECT set_config('app.workspace_id', ?, true)", ops[0].WorkspaceID.String())
	require.NoError(t, err)
	locked := 0
	require.NoError(t, lock.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT FROM operations WHERE id = ? FOR UPDATE) l",
		ops[0].ID).Scan(&locked))
	require.Equal(t, 1, locked)

	errs := make([]error, n)
	var wg sync.WaitGroup
	ends(ctx, uow, &wg, errs, ops, 0)
	require.Eventually(t, func() bool { return len(batches.taken()) > before }, time.Minute, time.Millisecond,
		"the first end's batch is out")
	ends(ctx, uow, &wg, errs, ops, 1, 2, 3, 4)
	require.Eventually(t, func() bool {
		waiting, err := postgres.CommitsWaiting(ctx, pool.DB)
		return err == nil && waiting == n-1
	}, time.Minute, time.Millisecond, "the other ends wait for the batch out")
	require.NoError(t, lock.Commit())
	wg.Wait()

	require.NoError(t, errs[0])
	for i := 1; i < n; i++ {
		if i == 3 {
			require.ErrorIs(t, errs[i], ports.ErrOperationFinished)
			continue
		}
		require.NoError(t, errs[i], "end %d", i)
	}
	// The first alone; then the four waiting, and once more the three
	// left after the refusal.
	require.Equal(t, []int{1, n - 1, n - 2}, batches.taken()[before:])
	requireVerified(t, uow, stores, ops)
}

// Job steps whose first reads arrive while another's are out are read
// together in the next batch, each under its own workspace (row-level
// security shows a step its rows only under its own set_config: under
// another's its operation would be missing, and its end would fail).
func TestJobStepsFirstReadsAreReadTogether(t *testing.T) {
	const n = 4
	db, pool, batches, stores, ops := startedVerifications(t, n, time.Hour)
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()
	before := len(batches.read())

	// The first end's reads wait for the webhook endpoints' table.
	lock, err := db.Owner.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = lock.ExecContext(ctx, "LOCK TABLE webhook_endpoints IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	errs := make([]error, n)
	var wg sync.WaitGroup
	ends(ctx, uow, &wg, errs, ops, 0)
	require.Eventually(t, func() bool { return len(batches.read()) > before }, time.Minute, time.Millisecond,
		"the first end's reads are out")
	ends(ctx, uow, &wg, errs, ops, 1, 2, 3)
	require.Eventually(t, func() bool {
		waiting, err := postgres.ReadsWaiting(ctx, pool.DB)
		return err == nil && waiting == n-1
	}, time.Minute, time.Millisecond, "the other ends' reads wait for the batch out")
	require.NoError(t, lock.Rollback())
	wg.Wait()

	for i := range n {
		require.NoError(t, errs[i], "end %d", i)
	}
	require.Equal(t, []int{1, n - 1}, batches.read()[before:])
	requireVerified(t, uow, stores, ops)
}

// startedVerifications is n verifications, each of a workspace of its
// own, started, on a pool of OpenPool whose batches are recorded and wait
// lockWait for a lock.
func startedVerifications(t *testing.T, n int, lockWait time.Duration) (*pgtest.DB, *bun.DB, *groupBatches, []model.Store, []model.Operation) {
	batches := &groupBatches{}
	db, pool, stores, ops := startedVerificationsTraced(t, n,
		postgres.Pool{MaxConns: 8, MaxIdle: 8, AcquireTimeout: 10 * time.Second, StepLockWait: lockWait}, batches)
	return db, pool, batches, stores, ops
}

// startedVerificationsTraced is startedVerifications on a pool so
// configured, traced by tracer.
func startedVerificationsTraced(t *testing.T, n int, config postgres.Pool, tracer pgx.QueryTracer) (*pgtest.DB, *bun.DB, []model.Store, []model.Operation) {
	db := pgtest.New(t)
	pool, err := postgres.OpenPool(context.Background(), db.AppDSN, config, postgres.WithQueryTracer(tracer))
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	uow := postgres.NewUnitOfWork(pool)
	stores := make([]model.Store, n)
	ops := make([]model.Operation, n)
	for i := range n {
		stores[i], ops[i] = verification(t, uow)
		require.NoError(t, startJob(context.Background(), uow, ops[i]))
	}
	return db, pool, stores, ops
}

// requireVerified checks that each of ops succeeded and its store is
// verified.
func requireVerified(t *testing.T, uow ports.UnitOfWork, stores []model.Store, ops []model.Operation) {
	t.Helper()
	for i := range ops {
		transact(t, uow, ops[i].WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			got, err := tx.Operations().Get(ctx, ops[i].ID)
			require.NoError(t, err)
			require.Equal(t, model.OperationSucceeded, got.Status, "operation %d", i)
			s, err := tx.Stores().Get(ctx, stores[i].ID)
			require.NoError(t, err)
			require.Equal(t, model.StoreVerified, s.Status, "store %d", i)
			return nil
		})
	}
}

// A step whose write waits for a lock longer than a batch does
// (postgres.DefaultStepLockWait) is sent again alone, on its own connection, and waits
// there; the steps behind its batch commit meanwhile.
func TestAStepWhoseWriteWaitsForALockCommitsAloneAndLetsTheOthersGo(t *testing.T) {
	const n = 4
	db, pool, _, stores, ops := startedVerifications(t, n, 0)
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()

	lock, err := db.Owner.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = lock.ExecContext(ctx, "SELECT set_config('app.workspace_id', ?, true)", ops[0].WorkspaceID.String())
	require.NoError(t, err)
	_, err = lock.ExecContext(ctx, "UPDATE operations SET updated_at = updated_at WHERE id = ?", ops[0].ID)
	require.NoError(t, err)

	errs := make([]error, n)
	var first, others sync.WaitGroup
	ends(ctx, uow, &first, errs, ops, 0)
	ends(ctx, uow, &others, errs, ops, 1, 2, 3)
	others.Wait()
	for i := 1; i < n; i++ {
		require.NoError(t, errs[i], "end %d", i)
	}
	waiting, err := postgres.CommitsWaiting(ctx, pool.DB)
	require.NoError(t, err)
	require.Zero(t, waiting, "the first end waits alone, not in a batch")
	require.NoError(t, lock.Commit())
	first.Wait()
	require.NoError(t, errs[0])
	requireVerified(t, uow, stores, ops)
}
