package postgres_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/retention"
	"github.com/oncehq/once/testsupport/pgtest"
)

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// retentionWorld writes rows as the superuser (no row-level security in
// the way), with the times and statuses each case needs.
type retentionWorld struct {
	t     *testing.T
	super *sql.DB
}

func (w retentionWorld) exec(query string, args ...any) {
	w.t.Helper()
	_, err := w.super.Exec(query, args...)
	require.NoError(w.t, err, query)
}

func (w retentionWorld) operation(ws uuid.UUID, status string, updated time.Time) uuid.UUID {
	id := uuid.New()
	w.exec(`INSERT INTO operations (id, workspace_id, kind, status, resource_type, created_by, created_at, updated_at)
		VALUES ($1, $2, 'store.verify', $3, 'store', $4, $5, $5)`, id, ws, status, uuid.New(), updated)
	return id
}

func (w retentionWorld) event(ws, op uuid.UUID, status string, deadLettered *time.Time) uuid.UUID {
	id := uuid.New()
	w.exec(`INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
		dispatched_at, dead_lettered_at)
		VALUES ($1, $2, 'store.credentials.verify', 'store', $3, jsonb_build_object('operation_id', $4::text), $5,
		CASE WHEN $5 = 'dispatched' THEN now() END, $6)`, id, ws, uuid.New(), op, status, deadLettered)
	return id
}

func (w retentionWorld) store(ws, id uuid.UUID) {
	w.exec(`INSERT INTO stores (id, workspace_id, platform, name, external_shop_id, status, credential_version, sealed_credentials)
		VALUES ($1, $2, 'shopify', 's', $3, 'verified', 1, '\x00')`, id, ws, id.String())
}

func (w retentionWorld) product(ws, id uuid.UUID) {
	w.exec(`INSERT INTO products (id, workspace_id, title, description, price_minor, currency, revision)
		VALUES ($1, $2, 'p', '', 1, 'EUR', 1)`, id, ws)
}

func (w retentionWorld) exists(table string, id uuid.UUID) bool {
	w.t.Helper()
	var n int
	require.NoError(w.t, w.super.QueryRow(`SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&n))
	return n == 1
}

// The retention cleanup deletes, in every workspace, exactly the finished
// records past their retention: never a live operation or task, never a
// dead letter younger than its retention, never an operation an
// undelivered or dead-lettered event still refers to, never a succeeded
// publication or a billed AI task; a transfer's items go with it.
func TestRetentionDeletesOnlyFinishedRecordsPastTheirRetention(t *testing.T) {
	db := pgtest.New(t)
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	w := retentionWorld{t: t, super: super}

	now := time.Now().UTC().Truncate(time.Microsecond)
	old, recent := now.Add(-40*24*time.Hour), now.Add(-24*time.Hour)
	oldDead, recentDead := now.Add(-20*24*time.Hour), now.Add(-2*24*time.Hour)

	// cancelling: a workspace whose one finished record is a cancelled
	// operation, found by the discovery's operations arm alone.
	ws, other, cancelling := uuid.New(), uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{ws, other, cancelling} {
		w.exec(`INSERT INTO workspaces (id, name) VALUES ($1, 'w')`, id)
	}
	gone, kept := map[string][]uuid.UUID{}, map[string][]uuid.UUID{}
	add := func(m map[string][]uuid.UUID, table string, id uuid.UUID) { m[table] = append(m[table], id) }

	// Operations.
	add(gone, "operations", w.operation(ws, "succeeded", old))
	add(gone, "operations", w.operation(ws, "failed", old))
	add(gone, "operations", w.operation(ws, "cancelled", old))
	add(gone, "operations", w.operation(cancelling, "cancelled", old))
	add(gone, "operations", w.operation(other, "succeeded", old))
	add(kept, "operations", w.operation(ws, "pending", old))
	add(kept, "operations", w.operation(ws, "running", old))
	add(kept, "operations", w.operation(ws, "succeeded", recent))
	delivered := w.operation(ws, "succeeded", old)
	add(gone, "operations", delivered)
	// A delivered event is the outbox retention's (ONCE_OUTBOX_RETENTION
	// after its delivery), not this cleaner's.
	add(kept, "outbox_events", w.event(ws, delivered, "dispatched", nil))
	withDeadLetter := w.operation(ws, "failed", old)
	add(kept, "operations", withDeadLetter)
	add(kept, "outbox_events", w.event(ws, withDeadLetter, "dead_letter", &recentDead))
	withPending := w.operation(ws, "succeeded", old)
	add(kept, "operations", withPending)
	add(kept, "outbox_events", w.event(ws, withPending, "pending", nil))

	// Dead letters, whose operation is expired too: both go.
	deadOp := w.operation(ws, "failed", old)
	add(gone, "operations", deadOp)
	add(gone, "outbox_events", w.event(ws, deadOp, "dead_letter", &oldDead))

	// Every kind whose rows expire, by its descriptor: an old row in each
	// status goes exactly when its retention lets that status go, a recent
	// finished one stays.
	for _, k := range kinds.Expiring() {
		row := func(status string, at time.Time) uuid.UUID {
			id, store, product := uuid.New(), uuid.New(), uuid.New()
			w.store(ws, store)
			w.product(ws, product)
			columns := mustKindRow(t, k)
			w.exec(`INSERT INTO `+k.Table+` (id, workspace_id, operation_id, status, created_at, updated_at`+columns.cols+`)
				SELECT $1, $2, $3, $4, $5, $5`+columns.vals+` WHERE $6::uuid IS NOT NULL AND $7::uuid IS NOT NULL`,
				id, ws, uuid.New(), status, at, store, product)
			return id
		}
		for _, status := range []string{"pending", "running", "succeeded", "failed"} {
			if slices.Contains(k.Retention.FinishedStatuses(), status) {
				add(gone, k.Table, row(status, old))
				add(kept, k.Table, row(status, recent))
			} else {
				add(kept, k.Table, row(status, old))
			}
		}
	}
	// The kinds' own rules, each from its test file (a transfer's items
	// go with it, a billed AI task stays).
	var ownChecks []func()
	for _, k := range kinds.Expiring() {
		if own := mustKindRow(t, k).ownRetention; own != nil {
			if check := own(w, ws, gone, kept); check != nil {
				ownChecks = append(ownChecks, check)
			}
		}
	}

	uow := postgres.NewUnitOfWork(db.App)
	store2 := postgres.NewRetention(db.App, uow)
	obs := &countingObserver{n: map[model.Expiring]int{}}
	policy := retention.Policy{Operations: 30 * 24 * time.Hour, Tasks: 30 * 24 * time.Hour, DeadLetters: 14 * 24 * time.Hour}
	c := retention.NewCleaner(store2, fixedClock(now), policy, 2, obs) // a batch of 2: several transactions per workspace
	n, err := c.RunOnce(context.Background())
	require.NoError(t, err)

	want := 0
	for table, ids := range gone {
		want += len(ids)
		for _, id := range ids {
			assert.False(t, w.exists(table, id), "%s %s should be gone", table, id)
		}
	}
	for table, ids := range kept {
		for _, id := range ids {
			assert.True(t, w.exists(table, id), "%s %s should be kept", table, id)
		}
	}
	for _, check := range ownChecks {
		check()
	}
	assert.Equal(t, want, n, "every deletion counted")
	counted := map[model.Expiring]int{}
	for table, ids := range gone {
		if table == "outbox_events" {
			table = string(model.ExpiringDeadLetters)
		}
		counted[model.Expiring(table)] += len(ids)
	}
	assert.Equal(t, counted, obs.n, "counted by kind")

	again, err := c.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Zero(t, again, "nothing left to delete")
}

type countingObserver struct{ n map[model.Expiring]int }

func (o *countingObserver) Expired(kind model.Expiring, n int) { o.n[kind] += n }

// A dead letter's retention counts from the moment it became one: the
// trigger stamps it on every way in, and a redrive clears it.
func TestDeadLetteredAtIsStampedAndClearedByTheDatabase(t *testing.T) {
	db := pgtest.New(t)
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	w := retentionWorld{t: t, super: super}
	ws := uuid.New()
	w.exec(`INSERT INTO workspaces (id, name) VALUES ($1, 'w')`, ws)
	id := w.event(ws, uuid.New(), "pending", nil)
	at := func() sql.NullTime {
		var t0 sql.NullTime
		require.NoError(t, super.QueryRow(`SELECT dead_lettered_at FROM outbox_events WHERE id = $1`, id).Scan(&t0))
		return t0
	}
	w.exec(`UPDATE outbox_events SET status = 'dispatching', locked_by = 'x', locked_until = now() WHERE id = $1`, id)
	assert.False(t, at().Valid)
	w.exec(`UPDATE outbox_events SET status = 'dead_letter', locked_by = NULL, locked_until = NULL WHERE id = $1`, id)
	assert.True(t, at().Valid, "stamped when it became a dead letter")
	w.exec(`UPDATE outbox_events SET status = 'pending' WHERE id = $1`, id)
	assert.False(t, at().Valid, "cleared by a redrive")
}

// The discovery takes a task table only from the checked list (the tables
// granted to the retention by their migration): a kind whose rows are
// kept, a table of another rule or no table at all is an unknown kind.
func TestExpiredWorkspacesRefusesATableNotGrantedToTheRetention(t *testing.T) {
	db := pgtest.New(t)
	for _, k := range kinds.All {
		if !k.Retention.Expires() {
			assertUnknownKind(t, db.App, k.Table)
		}
	}
	for _, name := range []string{"ai_billing_records", "idempotency_requests", "outbox_events", "workspaces", "no_such_table", kinds.Expiring()[0].Table + `"; --`} {
		assertUnknownKind(t, db.App, name)
	}
}

func assertUnknownKind(t *testing.T, db interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, name string) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT once_expired_workspaces(?, now(), 10)`, name)
	if err == nil {
		err = rows.Close()
	}
	require.ErrorContains(t, err, "unknown kind", name)
}

// A retention statement of a kind's own belongs to a declared kind whose
// rows expire: one left behind by a kind that changed its rule, or renamed
// its table, would be dead and its kind's rows deleted by the plain rule.
func TestOwnRetentionStatementsBelongToExpiringKinds(t *testing.T) {
	tables := map[string]bool{}
	for _, k := range kinds.Expiring() {
		tables[k.Table] = true
	}
	for table := range postgres.OwnExpiry {
		assert.True(t, tables[table], "own retention statement of %s, which is no expiring kind's table", table)
	}
}

// The upload expiry discovers the workspaces holding media still awaiting
// their upload registered before the horizon, and no others.
func TestExpiredWorkspacesFindsMediaUploadsNeverCompleted(t *testing.T) {
	db := pgtest.New(t)
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	w := retentionWorld{t: t, super: super}
	now := time.Now().UTC()
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)
	media := func(ws uuid.UUID, status string, at time.Time) {
		w.exec(`INSERT INTO media (id, workspace_id, filename, content_type, size_bytes, object_key, status, created_at, updated_at)
			VALUES ($1, $2, 'p.png', 'image/png', 1, 'k', $3, $4, $4)`, uuid.New(), ws, status, at)
	}
	expired, young, completed := uuid.New(), uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{expired, young, completed} {
		w.exec(`INSERT INTO workspaces (id, name) VALUES ($1, 'w')`, id)
	}
	media(expired, "awaiting_upload", old)
	media(young, "awaiting_upload", recent)
	media(completed, "processing", old)
	media(completed, "rejected", old)

	r := postgres.NewRetention(db.App, postgres.NewUnitOfWork(db.App))
	got, err := r.WorkspacesWithExpired(context.Background(), model.ExpiringMediaUploads, now.Add(-24*time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{expired}, got)
}
