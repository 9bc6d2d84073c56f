package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// Acceptance: with no workspace RLS context, the application
// role can neither read nor dispatch any workspace's outbox events, even
// with due events in several workspaces and even when the adapter names the
// workspace itself.
func TestDispatchWithoutWorkspaceSeesAndClaimsNothing(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := newUoW(db)
	ctx := context.Background()
	workspaces := []uuid.UUID{
		seedWorkspace(t, uow, t0.Add(48*time.Hour)),
		seedWorkspace(t, uow, t0.Add(48*time.Hour)),
		seedWorkspace(t, uow, t0.Add(48*time.Hour)),
	}
	// seedWorkspace leaves one pending event per workspace, due at t0.
	due, err := postgres.NewOutboxDiscovery(db.App).WorkspacesWithDueEvents(ctx, t0.Add(time.Hour), uuid.Nil, 100)
	if err != nil || len(due) != len(workspaces) {
		t.Fatalf("discovery: %v, %v; want the %d seeded workspaces", due, err, len(workspaces))
	}

	noWorkspace := func(what string, fn func(ctx context.Context, tx bun.Tx) error) {
		t.Helper()
		err := db.App.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := fn(ctx, tx); err != nil {
				return err
			}
			return errRollback // change nothing, whatever happened
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("%s: %v", what, err)
		}
	}

	noWorkspace("adapter", func(ctx context.Context, tx bun.Tx) error {
		for _, ws := range workspaces {
			d := postgres.NewOutboxDispatchOn(tx, ws)
			claimed, err := d.ClaimDue(ctx, "intruder", t0.AddDate(10, 0, 0), time.Minute, 100, 10)
			if err != nil {
				return err
			}
			if len(claimed.Events)+len(claimed.TakenOver)+len(claimed.DeadLettered) != 0 {
				t.Errorf("workspace %s: claimed %+v without a workspace context", ws, claimed)
			}
			n, err := d.DeleteDispatchedBefore(ctx, t0.AddDate(10, 0, 0), 100)
			if err != nil || n != 0 {
				t.Errorf("delete without workspace: %d, %v", n, err)
			}
			n, err = d.Redrive(ctx, nil, t0)
			if err != nil || n != 0 {
				t.Errorf("redrive without workspace: %d, %v", n, err)
			}
		}
		return nil
	})

	noWorkspace("raw SQL", func(ctx context.Context, tx bun.Tx) error {
		var n int
		if err := tx.NewRaw(`SELECT count(*) FROM outbox_events WHERE status = 'pending'`).Scan(ctx, &n); err != nil {
			return err
		}
		if n != 0 {
			t.Errorf("SELECT sees %d pending events", n)
		}
		res, err := tx.ExecContext(ctx, `
UPDATE outbox_events SET status = 'dispatching', locked_by = 'intruder', locked_until = now() + interval '1 hour'
 WHERE id IN (SELECT id FROM outbox_events WHERE status = 'pending' FOR UPDATE SKIP LOCKED)`)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Errorf("UPDATE claimed %d events", n)
		}
		res, err = tx.ExecContext(ctx, `DELETE FROM outbox_events`)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Errorf("DELETE removed %d events", n)
		}
		return nil
	})

	// With workspace A set, the adapter bound to B claims nothing either.
	err = db.App.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT set_config('app.workspace_id', ?, true)`, workspaces[0].String()); err != nil {
			return err
		}
		claimed, err := postgres.NewOutboxDispatchOn(tx, workspaces[1]).ClaimDue(ctx, "intruder", t0.AddDate(10, 0, 0), time.Minute, 100, 10)
		if err != nil {
			return err
		}
		if len(claimed.Events)+len(claimed.TakenOver)+len(claimed.DeadLettered) != 0 {
			t.Errorf("claimed %+v of another workspace", claimed)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}

	// Every event is still pending and unclaimed.
	for _, ws := range workspaces {
		transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
			events, err := tx.Outbox().List(ctx, "", 10)
			if err != nil {
				return err
			}
			for _, e := range events {
				if e.Status != model.OutboxPending || e.LockedBy != "" {
					t.Errorf("event %s: status %s locked by %q", e.ID, e.Status, e.LockedBy)
				}
			}
			return nil
		})
	}
}

var outboxFunctions = []string{
	"once_outbox_due_workspaces(timestamptz, uuid, int)",
	"once_outbox_dispatched_workspaces(timestamptz, int)",
	"once_outbox_stats(timestamptz)",
	"once_outbox_backlog(timestamptz, uuid, int)",
}

// The discovery functions are the one door across workspaces: only members
// of once_dispatcher may use them.
func TestOutboxDiscoveryNeedsDispatcherRole(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	for _, fn := range outboxFunctions {
		var public, app, dispatcher bool
		err := db.Owner.NewRaw(`SELECT has_function_privilege('public', ?::regprocedure, 'EXECUTE'),
		                               has_function_privilege(?, ?::regprocedure, 'EXECUTE'),
		                               has_function_privilege(?, ?::regprocedure, 'EXECUTE')`,
			fn, postgres.AppGroupRole, fn, postgres.DispatcherGroupRole, fn).Scan(ctx, &public, &app, &dispatcher)
		if err != nil {
			t.Fatal(err)
		}
		if public || app || !dispatcher {
			t.Errorf("%s: EXECUTE for PUBLIC=%v once_app=%v once_dispatcher=%v; want false false true", fn, public, app, dispatcher)
		}
	}

	calls := []string{
		`SELECT once_outbox_due_workspaces(now(), '00000000-0000-0000-0000-000000000000', 10)`,
		`SELECT once_outbox_dispatched_workspaces(now(), 10)`,
		`SELECT * FROM once_outbox_stats(now())`,
		`SELECT * FROM once_outbox_backlog(now(), '00000000-0000-0000-0000-000000000000', 10)`,
	}
	// The app role holds once_dispatcher by default (Bootstrap): allowed.
	for _, call := range calls {
		if _, err := db.App.ExecContext(ctx, call); err != nil {
			t.Errorf("app role: %s: %v", call, err)
		}
	}
	// With only once_app's privileges (SET ROLE drops the others): refused.
	for _, call := range calls {
		err := db.App.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, `SET LOCAL ROLE `+postgres.AppGroupRole); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, call)
			return err
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("once_app without once_dispatcher: %s: want permission denied, got %v", call, err)
		}
	}

	// Bootstrap can leave the app role out, and put it back.
	cfg := postgres.BootstrapConfig{Database: db.Name, OwnerRole: db.OwnerRole, AppRole: db.AppRole, AppNotDispatcher: true}
	if err := postgres.Bootstrap(ctx, pgtest.SuperuserDSN(), cfg); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.NewOutboxDiscovery(db.App).WorkspacesWithDueEvents(ctx, time.Now(), uuid.Nil, 10)
	if !domain.IsCode(err, domain.CodeForbidden) {
		t.Errorf("app role without once_dispatcher: want FORBIDDEN, got %v", err)
	}
	cfg.AppNotDispatcher = false
	if err := postgres.Bootstrap(ctx, pgtest.SuperuserDSN(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.NewOutboxDiscovery(db.App).Stats(ctx, time.Now()); err != nil {
		t.Errorf("app role with once_dispatcher again: %v", err)
	}
}
