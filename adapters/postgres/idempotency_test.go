package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// holdClaim claims rec in a transaction that stays open until release is
// closed, then commits (commit true) or rolls back.
func holdClaim(t *testing.T, uow ports.UnitOfWork, rec model.IdempotencyRecord, commit bool) (claimed <-chan error, done <-chan error, release chan<- struct{}) {
	claimedc, donec, releasec := make(chan error, 1), make(chan error, 1), make(chan struct{})
	go func() {
		donec <- uow.Transact(context.Background(), rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			existing, err := tx.Idempotency().Claim(ctx, rec)
			if err == nil && existing != nil {
				err = errors.New("scope unexpectedly completed")
			}
			claimedc <- err
			if err != nil {
				return err
			}
			<-releasec
			if !commit {
				return errRollback
			}
			return tx.Idempotency().Complete(ctx, rec.Scope, model.SavedResponse{Status: 201, Body: []byte(`{"ok":true}`)}, t0)
		})
	}()
	return claimedc, donec, releasec
}

func claimOnce(uow ports.UnitOfWork, rec model.IdempotencyRecord) (*model.IdempotencyRecord, error) {
	var existing *model.IdempotencyRecord
	err := uow.Transact(context.Background(), rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		existing, err = tx.Idempotency().Claim(ctx, rec)
		if err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	return existing, err
}

func TestClaimNeverWaitsForAConcurrentClaim(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(db.App)
	ws := newID(t)

	for _, commit := range []bool{true, false} {
		rec := model.IdempotencyRecord{
			Scope: scopeFor(ws), FingerprintKeyID: "k1", Fingerprint: []byte("fp"),
			CreatedAt: time.Now(), ExpiresAt: time.Now().Add(48 * time.Hour),
		}
		claimed, done, release := holdClaim(t, uow, rec, commit)
		if err := <-claimed; err != nil {
			t.Fatalf("A: claim: %v", err)
		}

		// B runs while A holds the scope, and A is released only after B
		// answered: a B that waited on A's lock would run into its
		// deadline and fail, however fast or slow the machine. The
		// deadline only bounds a failing run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var bErr error
		_ = uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
			_, bErr = tx.Idempotency().Claim(ctx, rec)
			return bErr
		})
		cancel()
		if !domain.IsCode(bErr, domain.CodeIdempotencyInProgress) {
			t.Fatalf("B: want %s, got %v", domain.CodeIdempotencyInProgress, bErr)
		}
		var de *domain.Error
		if !errors.As(bErr, &de) || de.RetryAfter != time.Second {
			t.Fatalf("B: want RetryAfter 1s, got %+v", de)
		}

		close(release)
		if err := <-done; err != nil && (commit || !errors.Is(err, errRollback)) {
			t.Fatalf("A: %v", err)
		}

		existing, err := claimOnce(uow, rec)
		if err != nil {
			t.Fatalf("C (A commit=%v): %v", commit, err)
		}
		if commit {
			if existing == nil || existing.Status != model.IdempotencyCompleted || existing.Response.Status != 201 ||
				string(existing.Response.Body) != `{"ok":true}` || string(existing.Fingerprint) != "fp" {
				t.Fatalf("C after commit: want the completed record, got %+v", existing)
			}
		} else if existing != nil {
			t.Fatalf("C after rollback: want to claim, got %+v", existing)
		}
	}
}

func TestCompleteWithoutClaimIsNotFound(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ws := newID(t)
	err := postgres.NewUnitOfWork(db.App).Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Idempotency().Complete(ctx, scopeFor(ws), model.SavedResponse{Status: 200}, t0)
	})
	if !domain.IsCode(err, domain.CodeNotFound) {
		t.Fatalf("want NOT_FOUND, got %v", err)
	}
}

func TestDiscoveryReturnsWorkspaceIdsOnly(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(db.App)
	ctx := context.Background()
	now := t0.Add(100 * time.Hour)
	expiredA := seedWorkspace(t, uow, now.Add(-time.Hour))
	expiredB := seedWorkspace(t, uow, now.Add(-time.Minute))
	live := seedWorkspace(t, uow, now.Add(time.Hour))

	// No workspace context at all: the plain pool.
	ids, err := postgres.NewDiscovery(db.App).WorkspacesWithExpiredIdempotency(ctx, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, id := range ids {
		got[id.String()] = true
	}
	if len(ids) != 2 || !got[expiredA.String()] || !got[expiredB.String()] || got[live.String()] {
		t.Fatalf("got %v, want exactly %s and %s", ids, expiredA, expiredB)
	}
	ids, err = postgres.NewDiscovery(db.App).WorkspacesWithExpiredIdempotency(ctx, now, 1)
	if err != nil || len(ids) != 1 {
		t.Fatalf("limit 1: %v, %v", ids, err)
	}

	// Discovery did not open the table to the app role.
	var n int
	if err := db.App.NewRaw(`SELECT count(*) FROM idempotency_requests`).Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("app role without workspace reads %d idempotency rows (%v)", n, err)
	}
	// Nor can anyone without the grant call it.
	var canExecute bool
	if err := db.Owner.NewRaw(`SELECT has_function_privilege('public', 'once_idempotency_expired_workspaces(timestamptz, int)', 'EXECUTE')`).
		Scan(ctx, &canExecute); err != nil {
		t.Fatal(err)
	}
	if canExecute {
		t.Error("PUBLIC may execute the discovery function")
	}

	// The cleaner then works workspace by workspace.
	var deleted int
	transact(t, uow, expiredA, func(ctx context.Context, tx ports.Tx) error {
		var err error
		deleted, err = tx.Idempotency().DeleteExpired(ctx, now, 10)
		return err
	})
	if deleted != 1 {
		t.Fatalf("deleted %d, want 1", deleted)
	}
	ids, err = postgres.NewDiscovery(db.App).WorkspacesWithExpiredIdempotency(ctx, now, 10)
	if err != nil || len(ids) != 1 || ids[0] != expiredB {
		t.Fatalf("after cleaning A: %v, %v", ids, err)
	}
}

// The claim's read of a fresh key goes to PostgreSQL as one prepared statement
// (its arguments as parameters, the text the same for every key), so it is
// parsed once per connection rather than on every request: after 30 keys
// claimed and completed the connection holds it prepared, once. It is
// planned for each execution's arguments, never with a generic plan: made
// on a small table, a generic plan reads the workspace through the expiry
// index (the application role's plan_cache_mode, set by Bootstrap).
func TestClaimIsPreparedOncePerConnection(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	pool := openPool(t, db.AppDSN, 1)
	uow := postgres.NewUnitOfWork(pool)
	ws := newID(t)
	const claims = 30
	for range claims {
		rec := freshRecord(ws)
		err := uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
			if existing, err := tx.Idempotency().Claim(ctx, rec); err != nil || existing != nil {
				return fmt.Errorf("claim of a fresh key: %+v, %w", existing, err)
			}
			return tx.Idempotency().Complete(ctx, rec.Scope, model.SavedResponse{Status: 201, Body: []byte(`{}`)}, t0)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var prepared, generic, custom int
	if err := pool.QueryRowContext(ctx,
		`SELECT count(*), coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
		   FROM pg_prepared_statements WHERE statement LIKE '%SELECT status, fingerprint_key_id%FROM idempotency_requests%'`,
	).Scan(&prepared, &generic, &custom); err != nil {
		t.Fatal(err)
	}
	if prepared != 1 {
		t.Fatalf("the connection holds %d prepared claim statements; want 1", prepared)
	}
	if generic != 0 || custom != claims {
		t.Fatalf("the claim ran with %d generic and %d custom plans; want 0 and %d", generic, custom, claims)
	}
}

// A migration that changes the type of a column the prepared claim
// returns makes PostgreSQL refuse the cached statement once per
// connection ("cached plan must not change result type"): that claim is
// UNAVAILABLE, so the client retries with its key, and the next one, on
// the same connection, prepares the statement again and succeeds.
func TestAClaimPreparedBeforeAMigrationIsRetriedNotAnInternalError(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	pool := openPool(t, db.AppDSN, 1)
	uow := postgres.NewUnitOfWork(pool)
	ws := newID(t)
	if _, err := claimOnce(uow, freshRecord(ws)); err != nil {
		t.Fatalf("claim before the migration: %v", err)
	}
	if _, err := db.Owner.ExecContext(ctx, `ALTER TABLE idempotency_requests ALTER COLUMN response_status TYPE bigint`); err != nil {
		t.Fatal(err)
	}
	_, err := claimOnce(uow, freshRecord(ws))
	if err != nil && !domain.IsCode(err, domain.CodeUnavailable) {
		t.Fatalf("claim on the stale statement: %v; want UNAVAILABLE (or success)", err)
	}
	if _, err := claimOnce(uow, freshRecord(ws)); err != nil {
		t.Fatalf("claim after the statement was prepared again: %v", err)
	}
}

// The statements sent with parameters (the idempotency claim, the outbox
// claim and mark, a job's operation and store statements) work in every exec mode pgx offers, including the two
// that do not describe a statement first, as behind a transaction-pooling
// PgBouncer (default_query_exec_mode=exec or simple_protocol).
func TestParameterisedStatementsWorkInEveryExecMode(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			uow := postgres.NewUnitOfWork(openPool(t, db.AppDSN+"&default_query_exec_mode="+mode, 2))
			ws := seedWorkspace(t, uow, t0.Add(48*time.Hour))
			if existing, err := claimOnce(uow, freshRecord(ws)); err != nil || existing != nil {
				t.Fatalf("idempotency claim: %+v, %v", existing, err)
			}
			claims := postgres.NewOutboxClaims(uow)
			claim, err := claims.ClaimDue(ctx, ws, "owner", t0.Add(time.Hour), time.Minute, 100, 10)
			if err != nil || len(claim.Events) != 1 {
				t.Fatalf("outbox claim: %+v, %v", claim, err)
			}
			if n, err := claims.MarkDispatched(ctx, ws, "owner", []uuid.UUID{claim.Events[0].ID}, t0.Add(time.Hour)); err != nil || n != 1 {
				t.Fatalf("outbox mark: %d, %v", n, err)
			}
			store, op := verification(t, uow)
			if err := uow.Transact(ctx, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				return verdict(ctx, tx, store, op)
			}); err != nil {
				t.Fatalf("a verification's end (the store's read and UPDATE, the operation's UPDATE): %v", err)
			}
			if err := uow.Transact(ctx, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				return verdict(ctx, tx, store, op)
			}); !errors.Is(err, ports.ErrOperationFinished) {
				t.Fatalf("a second end of the operation: %v; want ErrOperationFinished (its status read)", err)
			}
		})
	}
}

// A fresh key's record is written once, completed, by Complete: the claim
// inserts no in_progress row for Complete to update, which cost a second
// version of the row (and its planning and execution) on every idempotent
// create. pg_stat_xact_user_tables counts the transaction's own writes.
func TestAFreshKeysRecordIsWrittenOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(openPool(t, db.AppDSN, 1))
	ws := newID(t)
	rec := freshRecord(ws)
	var inserted, updated int
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		if existing, err := tx.Idempotency().Claim(ctx, rec); err != nil || existing != nil {
			return fmt.Errorf("claim of a fresh key: %+v, %w", existing, err)
		}
		if err := tx.Idempotency().Complete(ctx, rec.Scope, model.SavedResponse{Status: 201, Body: []byte(`{}`)}, t0); err != nil {
			return err
		}
		return postgres.TxDB(tx.(*postgres.Tx)).QueryRowContext(ctx,
			`SELECT n_tup_ins, n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = 'idempotency_requests'`).
			Scan(&inserted, &updated)
	})
	if inserted != 1 || updated != 0 {
		t.Fatalf("the claim and its completion inserted %d and updated %d rows; want 1 and 0", inserted, updated)
	}
	existing, err := claimOnce(uow, rec)
	if err != nil || existing == nil || existing.Status != model.IdempotencyCompleted || existing.Response.Status != 201 {
		t.Fatalf("the record after the commit: %+v, %v", existing, err)
	}
}
