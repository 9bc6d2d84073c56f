package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// insertFor returns an INSERT of a minimal row of table for workspace ws:
// a whole row for the tables no kind owns (some tests write them), the
// workspace alone for the others (refused by row-level security).
func insertFor(table, ws string) string {
	id := "gen_random_uuid()"
	switch table {
	case "workspaces":
		return fmt.Sprintf(`INSERT INTO workspaces (id, name) VALUES ('%s', 'x')`, ws)
	case "workspace_members":
		return fmt.Sprintf(`INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ('%s', %s, 'admin')`, ws, id)
	case "idempotency_requests":
		return fmt.Sprintf(`INSERT INTO idempotency_requests (workspace_id, user_id, method, path, idempotency_key,
			fingerprint_key_id, request_fingerprint, status) VALUES ('%s', %s, 'POST', '/x', %s, 'k', '\x01', 'in_progress')`, ws, id, id)
	case "operations":
		return fmt.Sprintf(`INSERT INTO operations (id, workspace_id, kind, status, resource_type, created_by)
			VALUES (%s, '%s', 'k', 'pending', 'store', %s)`, id, ws, id)
	case "stores":
		return fmt.Sprintf(`INSERT INTO stores (id, workspace_id, platform, name, external_shop_id, status,
			credential_version, sealed_credentials) VALUES (%s, '%s', 'shopify', 'n', %s::text, 'verified', 1, '\x01')`, id, ws, id)
	case "outbox_events":
		return fmt.Sprintf(`INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload)
			VALUES (%s, '%s', 't', 'store', %s, '{}')`, id, ws, id)
	// The reference below points nowhere: the policy's WITH CHECK fails
	// before the foreign key triggers run.
	case "products":
		return fmt.Sprintf(`INSERT INTO products (id, workspace_id, title, description, price_minor, currency, revision)
			VALUES (%s, '%s', 't', '', 0, 'EUR', 1)`, id, ws)
	}
	// A kind's tables: the workspace alone. The policy's WITH CHECK runs
	// before the constraints (NOT NULL, CHECK, foreign keys), so the
	// refused insert needs no more, and this file no line per kind.
	return fmt.Sprintf(`INSERT INTO %s (workspace_id) VALUES ('%s')`, table, ws)
}

// touch is a harmless SET clause for an UPDATE of table: its workspace
// column set to itself, which every tenant table has.
func touch(table string) string {
	col := workspaceColumn(table)
	return col + " = " + col
}

func workspaceColumn(table string) string {
	if table == "workspaces" {
		return "id"
	}
	return "workspace_id"
}

func requireRLSViolation(t *testing.T, err error, what string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Fatalf("%s: want an RLS violation (42501), got %v", what, err)
	}
}

func TestRLSWithoutWorkspaceSeesAndWritesNothing(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := newUoW(db)
	wsA := seedWorkspace(t, uow, t0.Add(48*time.Hour))
	ctx := context.Background()

	for _, table := range tenantTables(t, db) {
		var n int
		// Autocommit statements on the pool: no workspace was ever set.
		if err := db.App.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n != 0 {
			t.Errorf("%s: app role without workspace sees %d rows", table, n)
		}
		_, err := db.App.ExecContext(ctx, insertFor(table, wsA.String()))
		requireRLSViolation(t, err, "insert into "+table+" without workspace")
		res, err := db.App.ExecContext(ctx, "UPDATE "+table+" SET "+touch(table))
		if err != nil {
			t.Fatalf("update %s: %v", table, err)
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Errorf("%s: updated %d rows without workspace", table, n)
		}
	}
}

var errRollback = errors.New("roll back")

func TestRLSKeepsWorkspacesApart(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := newUoW(db)
	wsA := seedWorkspace(t, uow, t0.Add(48*time.Hour))
	wsB := seedWorkspace(t, uow, t0.Add(48*time.Hour))
	ctx := context.Background()

	for _, table := range tenantTables(t, db) {
		col := workspaceColumn(table)
		err := db.App.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, `SELECT set_config('app.workspace_id', ?, true)`, wsA.String()); err != nil {
				return err
			}
			var own, other, all int
			if err := tx.NewRaw("SELECT count(*) FROM "+table+" WHERE "+col+" = ?", wsA).Scan(ctx, &own); err != nil {
				return err
			}
			if err := tx.NewRaw("SELECT count(*) FROM "+table+" WHERE "+col+" = ?", wsB).Scan(ctx, &other); err != nil {
				return err
			}
			if err := tx.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &all); err != nil {
				return err
			}
			if own != 1 || other != 0 || all != 1 {
				t.Errorf("%s: own=%d other=%d all=%d, want 1 0 1", table, own, other, all)
			}
			res, err := tx.ExecContext(ctx, "UPDATE "+table+" SET "+touch(table)+" WHERE "+col+" = ?", wsB)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 0 {
				t.Errorf("%s: updated %d rows of another workspace", table, n)
			}
			// Moving an own row into another workspace fails WITH CHECK.
			_, err = tx.ExecContext(ctx, "SAVEPOINT s")
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, "UPDATE "+table+" SET "+col+" = ? WHERE "+col+" = ?", wsB, wsA)
			requireRLSViolation(t, err, "move "+table+" row to another workspace")
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT s"); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, insertFor(table, wsB.String()))
			requireRLSViolation(t, err, "insert into "+table+" for another workspace")
			return errRollback // the failed insert aborted the transaction
		})
		if err != nil && !errors.Is(err, errRollback) {
			t.Fatalf("%s: %v", table, err)
		}
	}

	// The same through the adapter: the domain error, not a leak.
	err := uow.Transact(ctx, wsA, func(ctx context.Context, tx ports.Tx) error {
		if _, err := tx.Workspaces().Get(ctx, wsB); !domain.IsCode(err, domain.CodeNotFound) {
			t.Errorf("get other workspace: want NOT_FOUND, got %v", err)
		}
		err := tx.Operations().Create(ctx, model.Operation{
			ID: newID(t), WorkspaceID: wsB, Kind: "k", Status: model.OperationPending, ResourceType: "store", CreatedBy: newID(t),
		})
		if !domain.IsCode(err, domain.CodeForbidden) {
			t.Errorf("create operation in other workspace: want FORBIDDEN, got %v", err)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
}

// After a transaction-local set_config commits, the setting reads ” (not
// NULL) for the rest of the session: the policies must still match nothing.
func TestRLSAfterLocalSettingOnSameConnection(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	wsA := seedWorkspace(t, newUoW(db), t0.Add(48*time.Hour))
	ctx := context.Background()

	conn, err := db.App.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT set_config('app.workspace_id', ?, true)`, wsA.String()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.NewRaw("SELECT count(*) FROM stores").Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("inside the transaction: %d rows, %v", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	var setting *string
	if err := conn.NewRaw(`SELECT current_setting('app.workspace_id', true)`).Scan(ctx, &setting); err != nil {
		t.Fatal(err)
	}
	if setting == nil || *setting != "" {
		t.Fatalf("setting after commit = %v, want ''", setting)
	}
	for _, table := range tenantTables(t, db) {
		if err := conn.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows visible after the transaction ended", table, n)
		}
	}
}
