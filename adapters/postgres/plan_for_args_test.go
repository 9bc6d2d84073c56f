package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A statement with driver-level arguments runs under plan_cache_mode's
// default, whatever the transaction switched to before it for its own
// statements (a job's prefetch, a store's UPDATE held ahead).
func TestAStatementWithArgumentsIsPlannedForThem(t *testing.T) {
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(db.App)
	store, op := verification(t, uow)
	mode := func(ctx context.Context, tx ports.Tx) string {
		t.Helper()
		var got string
		require.NoError(t, postgres.TxDB(tx.(*postgres.Tx)).(bun.Tx).Tx.QueryRowContext(ctx,
			`SELECT current_setting('plan_cache_mode') WHERE $1::int = 1`, 1).Scan(&got))
		return got
	}
	// The role's own setting, which TO DEFAULT puts back.
	want := ""
	transact(t, uow, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		want = mode(ctx, tx)
		return nil
	})
	transact(t, uow, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.PrefetchJobEnd(ctx, op.ID))
		require.Equal(t, want, mode(ctx, tx), "after the prefetch")
		read, err := tx.Stores().Get(ctx, store.ID)
		require.NoError(t, err)
		require.NoError(t, tx.Stores().Update(ctx, read))
		require.Equal(t, want, mode(ctx, tx), "after a store's UPDATE held ahead")
		return nil
	})
}
