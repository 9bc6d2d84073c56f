package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// Every transaction of a unit of work runs in its workspace, whether BEGIN
// carried the setting (a pool of OpenPool) or it was sent on its own (any
// other pool), and the setting ends with the transaction.
func TestTransactSetsTheWorkspaceOnEveryPool(t *testing.T) {
	t.Parallel()
	for name, pool := range everyPool(t) {
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

// The completing UPDATE of an idempotency record goes with the COMMIT on a
// pool of OpenPool and on its own on any other; either way the record
// commits completed, and a statement after it in the same transaction
// already sees it.
func TestCompleteCommitsTheRecordOnEveryPool(t *testing.T) {
	t.Parallel()
	for name, pool := range everyPool(t) {
		t.Run(name, func(t *testing.T) {
			uow := postgres.NewUnitOfWork(pool)
			rec := model.IdempotencyRecord{Scope: scopeFor(newID(t)), Fingerprint: []byte("f"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
			want := model.SavedResponse{Status: 201, Body: []byte(`{"ok":true}`)}
			transact(t, uow, rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				if existing, err := tx.Idempotency().Claim(ctx, rec); err != nil || existing != nil {
					t.Fatalf("claim: %v, %v", existing, err)
				}
				if err := tx.Idempotency().Complete(ctx, rec.Scope, want, t0); err != nil {
					return err
				}
				got, err := tx.Idempotency().Claim(ctx, rec)
				if err != nil || got == nil || got.Status != model.IdempotencyCompleted {
					t.Errorf("claim after complete in the same transaction = %+v, %v; want the completed record", got, err)
				}
				return nil
			})
			got, err := claimOnce(uow, rec)
			if err != nil || got == nil || got.Response.Status != 201 || string(got.Response.Body) != string(want.Body) {
				t.Fatalf("claim after commit = %+v, %v; want the completed response", got, err)
			}
		})
	}
}

// A statement held for the COMMIT that fails takes the transaction with
// it: nothing of it commits, Transact reports the failure, and the pool
// goes on serving.
func TestAHeldStatementThatFailsRollsBackTheTransaction(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(db.App)
	rec := model.IdempotencyRecord{Scope: scopeFor(newID(t)), Fingerprint: []byte("f"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	err := uow.Transact(context.Background(), rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		if _, err := tx.Idempotency().Claim(ctx, rec); err != nil {
			t.Fatalf("claim: %v", err)
		}
		_, err := postgres.TxDB(tx.(*postgres.Tx)).ExecContext(postgres.HoldForCommit(ctx), `SELECT 1/0`)
		return err // nil: held for the COMMIT
	})
	if err == nil {
		t.Fatal("Transact with a failing held statement succeeded")
	}
	// The claim was rolled back: the scope can be claimed afresh.
	if got, err := claimOnce(uow, rec); err != nil || got != nil {
		t.Fatalf("claim after the failed transaction = %+v, %v; want a fresh claim", got, err)
	}
}

// A task row's INSERT held for the COMMIT that a constraint refuses fails
// the transaction with the error the INSERT would have had on its own.
func TestAHeldInsertFailsWithItsOwnError(t *testing.T) {
	t.Parallel()
	for name, pool := range everyPool(t) {
		t.Run(name, func(t *testing.T) {
			ws := newID(t)
			m := model.Media{ID: uuid.New(), WorkspaceID: ws, Filename: "a.png", ContentType: "image/png", SizeBytes: 1,
				ObjectKey: "k", Status: model.MediaAwaitingUpload, CreatedAt: t0, UpdatedAt: t0}
			err := postgres.NewUnitOfWork(pool).Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
				if err := tx.Media().Create(ctx, m); err != nil {
					return err
				}
				return tx.Media().Create(ctx, m)
			})
			if !domain.IsCode(err, domain.CodeConflict) {
				t.Fatalf("a duplicate media row: %v, want %s", err, domain.CodeConflict)
			}
		})
	}
}

// everyPool is a pool of OpenPool, whose connections hold statements for
// the COMMIT and set the workspace with BEGIN, and one opened with
// sql.Open on the same database, which does neither.
func everyPool(t *testing.T) map[string]*bun.DB {
	t.Helper()
	return everyPoolOf(t, pgtest.New(t))
}

// everyPoolOf is everyPool on db.
func everyPoolOf(t *testing.T, db *pgtest.DB) map[string]*bun.DB {
	t.Helper()
	plain, err := sql.Open("pgx", db.AppDSN)
	if err != nil {
		t.Fatal(err)
	}
	other := bun.NewDB(plain, pgdialect.New())
	t.Cleanup(func() { _ = other.Close() })
	return map[string]*bun.DB{"OpenPool": db.App, "sql.Open": other}
}
