package postgres_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

// countedCommits counts the unconfirmed commits a unit of work reports.
type countedCommits struct{ n atomic.Int64 }

func (c *countedCommits) UnconfirmedCommit() { c.n.Add(1) }

// unconfirmedWorld is a private server whose commits wait for a
// synchronous standby that never comes, and what waits there.
type unconfirmedWorld struct {
	t     *testing.T
	db    *pgsandbox.Sandbox
	super *sql.DB
	pool  *bun.DB
	uow   *postgres.UnitOfWork
	log   bytes.Buffer
	count countedCommits
}

// newUnconfirmedWorld starts the server, makes the sandbox and workspace
// ws in it, writes what seed writes in ws, and only then makes commits
// wait.
func newUnconfirmedWorld(t *testing.T, ws uuid.UUID, seed func(ctx context.Context, tx ports.Tx) error) *unconfirmedWorld {
	cluster := pgcluster.StartForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := &unconfirmedWorld{t: t}
	var err error
	// Not dropped at the end: its DROP DATABASE would wait for the
	// standby too; the server goes whole.
	w.db, err = pgsandbox.Create(ctx, cluster.SuperuserDSN(), "once_syncwait")
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.db.App.Close(); _ = w.db.Owner.Close() })
	transact(t, postgres.NewUnitOfWork(w.db.App), ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "ws", CreatedAt: t0}); err != nil {
			return err
		}
		return seed(ctx, tx)
	})
	w.super, err = sql.Open("pgx", w.db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.super.Close() })
	// From now on every commit that wrote something waits for a standby
	// named nobody, as on a primary whose standby stopped receiving.
	_, err = w.super.ExecContext(ctx, `ALTER SYSTEM SET synchronous_standby_names = 'nobody'`)
	require.NoError(t, err)
	_, err = w.super.ExecContext(ctx, `SELECT pg_reload_conf()`)
	require.NoError(t, err)
	apitest.Eventually(t, 30*time.Second, "the server reloaded its configuration", func() bool {
		// A new session has what the postmaster read.
		fresh, err := sql.Open("pgx", w.db.SuperuserDSN())
		require.NoError(t, err)
		defer fresh.Close()
		var names string
		require.NoError(t, fresh.QueryRowContext(ctx, `SELECT current_setting('synchronous_standby_names')`).Scan(&names))
		return names == "nobody"
	})
	// A pool of its own, opened after the reload.
	w.pool, err = postgres.OpenPool(ctx, w.db.AppDSN, postgres.DefaultPool())
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.pool.Close() })
	w.uow = postgres.NewUnitOfWork(w.pool, postgres.WithUnconfirmedCommitLog(slog.New(slog.NewTextHandler(&w.log, nil)), &w.count))
	return w
}

// cancelWait cancels the wait of the one backend of role waiting for
// the standby, once it waits.
func (w *unconfirmedWorld) cancelWait(role string) {
	w.t.Helper()
	pgcluster.CancelSyncRepWait(w.t, w.super, `usename = $1`, role)
}

// inBackground runs fn and returns where its error arrives.
func inBackground(fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	return done
}

// A commit whose wait for the synchronous standby was cancelled is on the
// primary only: PostgreSQL answers the COMMIT with success and a warning.
// The unit of work answers it as an unknown outcome (CodeUnavailable,
// retry with the same key), logs it once and counts it; a Dispatcher's
// claim so committed returns no event to publish; a transaction begun
// outside a workspace reports it too.
func TestCommitNotConfirmedByTheSynchronousStandbyIsNoSuccess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ws := uuid.New()
	w := newUnconfirmedWorld(t, ws, func(context.Context, ports.Tx) error { return nil })
	ctx := context.Background()

	ev, err := model.NewOutboxEvent(uuid.New(), ws, model.EventStoreCredentialsVerify, "store", uuid.New(),
		model.StoreCredentialsVerify{StoreID: uuid.New(), CredentialVersion: 1}, time.Now().Add(-time.Minute))
	require.NoError(t, err)
	done := inBackground(func() error {
		return w.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Outbox().Append(ctx, ev) })
	})
	w.cancelWait(w.db.AppRole)
	err = <-done
	require.Error(t, err, "a commit the standby may not have is no success")
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	assert.True(t, domain.ErrorCode(err).RetrySameKey())
	assert.Contains(t, err.Error(), "retry with the same Idempotency-Key")
	assert.EqualValues(t, 1, w.count.n.Load())
	assert.Contains(t, w.log.String(), "level=WARN")
	assert.Contains(t, w.log.String(), "canceling wait for synchronous replication")
	var local int
	require.NoError(t, w.super.QueryRowContext(ctx, `SELECT count(*) FROM outbox_events WHERE id = $1`, ev.ID).Scan(&local))
	assert.Equal(t, 1, local, "committed on the primary: the outcome is unknown, not a rollback")

	// A COMMIT sent on its own (a read after the writes sent them ahead
	// of it) is known the same way.
	again, err := model.NewOutboxEvent(uuid.New(), ws, model.EventStoreCredentialsVerify, "store", uuid.New(),
		model.StoreCredentialsVerify{StoreID: uuid.New(), CredentialVersion: 1}, time.Now().Add(time.Hour))
	require.NoError(t, err)
	done = inBackground(func() error {
		return w.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.Outbox().Append(ctx, again); err != nil {
				return err
			}
			_, err := tx.Outbox().Get(ctx, again.ID)
			return err
		})
	})
	w.cancelWait(w.db.AppRole)
	err = <-done
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err), "%v", err)
	assert.EqualValues(t, 2, w.count.n.Load())

	// The Dispatcher's claim of the first event is a commit too: cancelled
	// while it waits, it hands out nothing to publish.
	claims := postgres.NewOutboxClaims(w.uow)
	var claim ports.Claim
	done = inBackground(func() error {
		var err error
		claim, err = claims.ClaimDue(ctx, ws, "dispatcher-1", time.Now(), time.Minute, 10, 5)
		return err
	})
	w.cancelWait(w.db.AppRole)
	err = <-done
	require.Error(t, err, "a claim the standby may not have")
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	assert.Empty(t, claim.Events)
	assert.EqualValues(t, 3, w.count.n.Load())

	// A transaction outside any workspace (stdlib's, under the pool's
	// connection) reports it as well.
	owner, err := postgres.OpenPool(ctx, w.db.OwnerDSN, postgres.DefaultPool())
	require.NoError(t, err)
	defer owner.Close()
	done = inBackground(func() error {
		return owner.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE unconfirmed_commit_probe (id int)`)
			return err
		})
	})
	w.cancelWait(w.db.OwnerRole)
	err = <-done
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the synchronous standby may not have it")
}

// A replay answers a record only once the synchronous standby is known to
// have it: a record committed on the primary alone (its commit's wait was
// cancelled) may be lost by a failover, and its replay would be an
// acknowledgement of a write that is gone. So the replay's transaction
// writes to the WAL and commits, which waits for the standby; cancelled,
// the replay is an unknown outcome too.
func TestReplayWaitsForTheSynchronousStandby(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ws := uuid.New()
	sc := scopeFor(ws)
	rec := model.IdempotencyRecord{Scope: sc, FingerprintKeyID: "k1", Fingerprint: []byte{1}, CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	w := newUnconfirmedWorld(t, ws, func(ctx context.Context, tx ports.Tx) error {
		if _, err := tx.Idempotency().Claim(ctx, rec); err != nil {
			return err
		}
		return tx.Idempotency().Complete(ctx, sc, model.SavedResponse{Status: 201, Body: []byte(`{}`)}, time.Now())
	})
	ctx := context.Background()

	var replayed *model.IdempotencyRecord
	done := inBackground(func() error {
		return w.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
			var err error
			replayed, err = tx.Idempotency().Claim(ctx, rec)
			return err
		})
	})
	var err error
	answered := false
	apitest.Eventually(t, time.Minute, "the replay waiting for the standby", func() bool {
		select {
		case err = <-done:
			answered = true
			return true
		default:
		}
		var waiting int
		require.NoError(t, w.super.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND wait_event = 'SyncRep'`, w.db.AppRole).Scan(&waiting))
		return waiting > 0
	})
	require.False(t, answered, "a replay answered without the standby (err %v)", err)
	w.cancelWait(w.db.AppRole)
	err = <-done
	require.Error(t, err)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	require.NotNil(t, replayed, "the record was read")
}
