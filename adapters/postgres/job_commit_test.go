package postgres_test

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// roundTrips counts what a pool's connections send and wait for: each
// query (a simple one with its statements, or an extended one) and each
// batch is one round trip. Modes counts the statements that switch the
// transaction's plan_cache_mode (params.go).
type roundTrips struct{ n, modes atomic.Int32 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	if strings.HasPrefix(data.SQL, "SET LOCAL plan_cache_mode") {
		r.modes.Add(1)
	}
}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// startJob is a job's start as jobs.Handler runs it: its reads in one
// round trip, its operation running.
func startJob(ctx context.Context, uow ports.UnitOfWork, op model.Operation) error {
	return uow.Transact(ports.WithRefusalsAtCommit(ctx), op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		// No event is read here: no such event is stored.
		if err := tx.PrefetchJob(ctx, uuid.Must(uuid.NewV7()), op.ID); err != nil {
			return err
		}
		read, err := tx.Operations().Get(ctx, op.ID)
		if err != nil {
			return err
		}
		read.Start(t0.Add(time.Second))
		return tx.Operations().Update(ctx, read)
	})
}

// endJob is a verification's end as jobs.Handler runs it: the store and
// the operation read again, the store verified and the operation
// succeeded, announced to the workspace's webhooks (none here).
func endJob(ctx context.Context, uow ports.UnitOfWork, op model.Operation) error {
	return uow.Transact(ports.WithRefusalsAtCommit(ctx), op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.PrefetchJobEnd(ctx, op.ID); err != nil {
			return err
		}
		store, err := tx.Stores().Get(ctx, op.ResourceID)
		if err != nil {
			return err
		}
		store.Status, store.UpdatedAt = model.StoreVerified, t0.Add(2*time.Second)
		if err := tx.Stores().Update(ctx, store); err != nil {
			return err
		}
		op.Status = model.OperationRunning
		op.Succeed(t0.Add(2 * time.Second))
		return jobs.SaveEnded(ctx, tx, op)
	})
}

// A job's start and its end each commit in the round trip of their last
// writes (the start's UPDATE of its operation; the end's UPDATEs of its
// store and its operation), which raise their own refusals (sql/035): two
// round trips each, where checking the rows affected before the COMMIT
// made three. What they wrote is committed.
func TestAJobsStartAndEndCommitWithTheirLastWrites(t *testing.T) {
	db := pgtest.New(t)
	var trips roundTrips
	pool, err := postgres.OpenPool(context.Background(), db.AppDSN,
		postgres.Pool{MaxConns: 1, MaxIdle: 1, AcquireTimeout: 10 * time.Second}, postgres.WithQueryTracer(&trips))
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	uow := postgres.NewUnitOfWork(pool)
	ctx := context.Background()

	// The first job prepares the connection's statements (a round trip
	// of their own, once).
	_, first := verification(t, uow)
	require.NoError(t, startJob(ctx, uow, first))
	require.NoError(t, endJob(ctx, uow, first))

	store, op := verification(t, uow)
	before, modes := trips.n.Load(), trips.modes.Load()
	require.NoError(t, startJob(ctx, uow, op))
	require.Equal(t, int32(2), trips.n.Load()-before, "a job's start: its reads in a batch of their own, then its UPDATE in a commit batch")
	before = trips.n.Load()
	require.NoError(t, endJob(ctx, uow, op))
	require.Equal(t, int32(2), trips.n.Load()-before, "a job's end: its reads in a batch of their own, then its UPDATEs in a commit batch")
	// Every statement of either is planned once per connection: each
	// step's reads say so once, with their BEGIN, and so does the batch
	// its writes commit in (step_groups.go), once for all its steps.
	require.Equal(t, int32(4), trips.modes.Load()-modes, "plan_cache_mode switches in a job's two steps, each alone in its batch")

	transact(t, uow, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		got, err := tx.Operations().Get(ctx, op.ID)
		require.NoError(t, err)
		require.Equal(t, model.OperationSucceeded, got.Status)
		gotStore, err := tx.Stores().Get(ctx, store.ID)
		require.NoError(t, err)
		require.Equal(t, model.StoreVerified, gotStore.Status)
		return nil
	})
}

// A write sent with the COMMIT that changes nothing rolls the transaction
// back and is the commit's error, as it was the write's: a second end of
// an ended operation is ErrOperationFinished and leaves the store as the
// first end left it; an end whose store is gone is CodeNotFound and
// leaves the operation running; a start of an ended operation is
// ErrOperationFinished. On a pool opened some other way the writes go at
// once, with the same errors.
func TestAWriteSentWithTheCommitRefusesItByItself(t *testing.T) {
	sandbox := pgtest.New(t)
	super, err := sql.Open("pgx", sandbox.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	for name, db := range everyPoolOf(t, sandbox) {
		t.Run(name, func(t *testing.T) {
			uow := postgres.NewUnitOfWork(db)
			ctx := context.Background()

			store, op := verification(t, uow)
			require.NoError(t, startJob(ctx, uow, op))
			require.NoError(t, endJob(ctx, uow, op))
			transact(t, uow, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				gotStore, err := tx.Stores().Get(ctx, store.ID)
				require.NoError(t, err)
				gotStore.Status = model.StoreVerificationFailed
				return tx.Stores().Update(ctx, gotStore)
			})
			err := endJob(ctx, uow, op)
			require.ErrorIs(t, err, ports.ErrOperationFinished)
			require.True(t, domain.IsCode(err, domain.CodeInvalidState), "%v", err)
			require.ErrorIs(t, startJob(ctx, uow, op), ports.ErrOperationFinished)

			gone, running := verification(t, uow)
			require.NoError(t, startJob(ctx, uow, running))
			err = uow.Transact(ports.WithRefusalsAtCommit(ctx), running.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				if err := tx.PrefetchJobEnd(ctx, running.ID); err != nil {
					return err
				}
				read, err := tx.Stores().Get(ctx, gone.ID)
				if err != nil {
					return err
				}
				// Deleted after the end's read: its UPDATE finds no row.
				_, err = super.ExecContext(ctx, `DELETE FROM stores WHERE id = $1`, gone.ID)
				require.NoError(t, err)
				read.Status = model.StoreVerified
				if err := tx.Stores().Update(ctx, read); err != nil {
					return err
				}
				ended := running
				ended.Status = model.OperationRunning
				ended.Succeed(t0.Add(3 * time.Second))
				return jobs.SaveEnded(ctx, tx, ended)
			})
			require.True(t, domain.IsCode(err, domain.CodeNotFound), "%v", err)

			transact(t, uow, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				gotStore, err := tx.Stores().Get(ctx, store.ID)
				require.NoError(t, err)
				require.Equal(t, model.StoreVerificationFailed, gotStore.Status, "the refused end's store change rolled back")
				return nil
			})
			transact(t, uow, running.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				got, err := tx.Operations().Get(ctx, running.ID)
				require.NoError(t, err)
				require.Equal(t, model.OperationRunning, got.Status, "the end refused for its store did not end the operation")
				return nil
			})
		})
	}
}

// A statement held for the COMMIT as a simple query (a product's INSERT)
// after one held ahead (a store's UPDATE) commits with it: both are
// written, in the order they were made.
func TestAStatementHeldForTheCommitAfterOneHeldAheadIsWritten(t *testing.T) {
	for name, db := range everyPool(t) {
		t.Run(name, func(t *testing.T) {
			uow := postgres.NewUnitOfWork(db)
			store, op := verification(t, uow)
			product := model.Product{ID: newID(t), WorkspaceID: op.WorkspaceID, Title: "Mug", PriceMinor: 100, Currency: "EUR",
				MediaIDs: []uuid.UUID{}, Revision: 1, CreatedAt: t0, UpdatedAt: t0}
			transact(t, uow, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				store.Status = model.StoreVerified
				if err := tx.Stores().Update(ports.WithRefusalsAtCommit(ctx), store); err != nil {
					return err
				}
				return tx.Products().Create(ctx, product)
			})
			transact(t, uow, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				got, err := tx.Products().Get(ctx, product.ID)
				require.NoError(t, err, "the product held for the COMMIT")
				require.Equal(t, "Mug", got.Title)
				gotStore, err := tx.Stores().Get(ctx, store.ID)
				require.NoError(t, err)
				require.Equal(t, model.StoreVerified, gotStore.Status)
				return nil
			})
		})
	}
}
