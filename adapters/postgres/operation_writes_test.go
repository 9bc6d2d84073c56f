package postgres_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A job's start (its operation from pending to running) and a cancel
// request change no column an index of operations holds: PostgreSQL
// writes the new version beside the old one on its page (a HOT update)
// and adds no entry to any index. Of a job's two UPDATEs of its
// operation, only the end writes the indexes.
func TestAnOperationsStartAndCancelRequestWriteNoIndex(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(openPool(t, db.AppDSN, 1))
	ws := newID(t)
	op := model.Operation{ID: newID(t), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationPending,
		ResourceType: "store", ResourceID: newID(t), CreatedBy: newID(t), CreatedAt: t0, UpdatedAt: t0}
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Create(ctx, op) })

	// The session's counts of rows updated in operations, and of those
	// HOT, which include its earlier transactions' until it reports them.
	counts := func(ctx context.Context, tx ports.Tx) (updated, hot int) {
		require.NoError(t, postgres.TxDB(tx.(*postgres.Tx)).QueryRowContext(ctx,
			`SELECT pg_stat_get_xact_tuples_updated('operations'::regclass), pg_stat_get_xact_tuples_hot_updated('operations'::regclass)`).
			Scan(&updated, &hot))
		return updated, hot
	}
	writes := func(what string, write func(ctx context.Context, tx ports.Tx) error) {
		transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
			updated0, hot0 := counts(ctx, tx)
			if err := write(ctx, tx); err != nil {
				return err
			}
			updated, hot := counts(ctx, tx)
			assert.Equal(t, 1, updated-updated0, "%s: rows updated", what)
			assert.Equal(t, 1, hot-hot0, "%s: rows updated beside the old version, no index written (HOT)", what)
			return nil
		})
	}
	writes("the start", func(ctx context.Context, tx ports.Tx) error {
		op.Status, op.UpdatedAt = model.OperationRunning, t0.Add(time.Second)
		return tx.Operations().Update(ctx, op)
	})
	writes("the cancel request", func(ctx context.Context, tx ports.Tx) error {
		_, err := tx.Operations().RequestCancel(ctx, op.ID, t0.Add(2*time.Second))
		return err
	})
}

// Each job's end writes an entry into every index of operations, so each
// index must be one a statement of the service reads, or the uniqueness
// of the id: an index nothing reads costs every write for nothing.
func TestEveryIndexOfOperationsServesAStatement(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	ws := newID(t)
	served := map[string]struct {
		why  string
		stmt string
		args []any
	}{
		"operations_pkey": {why: "an operation's id is unique"},
		"operations_workspace_id_idx": {why: "the list, newest first (listNewest)",
			stmt: `SELECT id FROM operations WHERE workspace_id = ? AND id < ? ORDER BY id DESC LIMIT 20`,
			args: []any{ws, newID(t)}},
		"operations_finished_idx": {why: "the retention's delete of finished operations",
			stmt: postgres.DeleteExpiredSQL[model.ExpiringOperations],
			args: []any{ws, time.Now(), 100}},
	}

	var indexes []string
	require.NoError(t, db.Owner.NewRaw(`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'operations'`).
		Scan(ctx, &indexes))
	tx, err := db.App.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `SELECT set_config('app.workspace_id', ?, true)`, ws.String())
	require.NoError(t, err)
	// The table is empty: without this, a sequential scan is the cheapest
	// read of all.
	_, err = tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`)
	require.NoError(t, err)
	for _, name := range indexes {
		s, ok := served[name]
		if !ok {
			t.Errorf("index %s serves no statement of the service", name)
			continue
		}
		if s.stmt == "" {
			continue
		}
		var plan string
		require.NoError(t, tx.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+s.stmt, s.args...).Scan(&plan))
		var root []struct{ Plan planNode }
		require.NoError(t, json.Unmarshal([]byte(plan), &root))
		if !readsIndex(root[0].Plan, name) {
			t.Errorf("%s, which %s is for, does not read it: %s", s.why, name, plan)
		}
	}
}

// readsIndex tells whether the plan n reads the index name.
func readsIndex(n planNode, name string) bool {
	if n.IndexName == name {
		return true
	}
	for _, c := range n.Plans {
		if readsIndex(c, name) {
			return true
		}
	}
	return false
}
