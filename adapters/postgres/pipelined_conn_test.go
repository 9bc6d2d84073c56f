package postgres_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/internal/pgtest"
	"github.com/oncehq/once/ports"
)

// Every transaction of a unit of work runs in its workspace, whether BEGIN
// carried the setting (a pool of OpenPool) or it was sent on its own (any
// other pool), and the setting ends with the transaction.
func TestTransactSetsTheWorkspaceOnEveryPool(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	plain, err := sql.Open("pgx", db.AppDSN)
	if err != nil {
		t.Fatal(err)
	}
	other := bun.NewDB(plain, pgdialect.New())
	t.Cleanup(func() { _ = other.Close() })

	for name, pool := range map[string]*bun.DB{"OpenPool": db.App, "sql.Open": other} {
		t.Run(name, func(t *testing.T) {
			ws := uuid.New()
			transact(t, postgres.NewUnitOfWork(pool), ws, func(ctx context.Context, tx ports.Tx) error {
				if got := setting(t, ctx, postgres.TxDB(tx.(*postgres.Tx))); got != ws.String() {
					t.Errorf("app.workspace_id in the transaction = %q, want %s", got, ws)
				}
				return nil
			})
			if got := workspaceSetting(t, context.Background(), pool); got != "" {
				t.Errorf("app.workspace_id in a transaction of its own = %q, want none", got)
			}
		})
	}

}

// workspaceSetting reads app.workspace_id in a new transaction begun with
// ctx on a connection of its own.
func workspaceSetting(t *testing.T, ctx context.Context, db *bun.DB) string {
	t.Helper()
	var got string
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		got = setting(t, ctx, tx)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// setting is app.workspace_id as db sees it.
func setting(t *testing.T, ctx context.Context, db bun.IDB) string {
	t.Helper()
	var got sql.NullString
	if err := db.NewRaw(`SELECT current_setting('app.workspace_id', true)`).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	return got.String
}
