package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A statement that waits for an event's row lock while another
// transaction moves the event to another partition of outbox_events gets
// SQLSTATE 40001 from PostgreSQL when that transaction commits. The
// adapter runs it again, and it then sees the event where it is now: a
// job's dead letter follows a mark into the dispatched history, a fenced
// release finds it is no longer the owner.
func TestStatementsFollowAnEventMovedToAnotherPartition(t *testing.T) {
	t.Parallel()
	followMovedEvents(t, pgtest.New(t))
}

// The server words its errors in its lc_messages: on one that speaks
// German the moves are recognised and followed all the same.
func TestStatementsFollowAMovedEventOnAServerThatSpeaksGerman(t *testing.T) {
	t.Parallel()
	const german = "de_DE.UTF-8"
	if !localeInstalled(german) {
		pgcluster.Missing(t, "moved rows", fmt.Errorf("the locale %s is not installed (scripts/services.sh makes it)", german))
	}
	cluster := pgcluster.StartForTest(t, "lc_messages="+german)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := pgsandbox.Create(ctx, cluster.SuperuserDSN(), "once_german")
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	require.NoError(t, err)
	_, err = db.App.ExecContext(ctx, `SELECT 1 / 0`)
	require.ErrorContains(t, err, "Division durch Null", "the server must answer in German for this test to mean anything")

	followMovedEvents(t, db)
}

// localeInstalled reports whether `locale -a` lists name (it spells
// UTF-8 as utf8).
func localeInstalled(name string) bool {
	out, err := exec.Command("locale", "-a").Output()
	if err != nil {
		return false
	}
	want := strings.ToLower(strings.ReplaceAll(name, "-", ""))
	for _, l := range strings.Fields(string(out)) {
		if strings.ToLower(strings.ReplaceAll(l, "-", "")) == want {
			return true
		}
	}
	return false
}

// followMovedEvents runs each statement that may meet an event while
// another transaction moves it, on db.
func followMovedEvents(t *testing.T, db *pgsandbox.Sandbox) {
	uow := postgres.NewUnitOfWork(db.App)
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })

	cases := []struct {
		name string
		// move runs in the blocking transaction: it moves the event.
		move string
		// waiter waits for the row lock, then must succeed.
		waiter func(ctx context.Context, tx ports.Tx, id uuid.UUID) (bool, error)
		want   bool
		status model.OutboxStatus
	}{{
		name: "a job's dead letter while the Dispatcher marks the event",
		move: `UPDATE outbox_events SET status = 'dispatched', dispatched_at = now(), locked_by = NULL, locked_until = NULL WHERE id = $1`,
		waiter: func(ctx context.Context, tx ports.Tx, id uuid.UUID) (bool, error) {
			return tx.Outbox().DeadLetterJob(ctx, id, 1, "given up")
		},
		want: true, status: model.OutboxDeadLetter,
	}, {
		name: "a stale Dispatcher's release while another parks the event",
		move: `UPDATE outbox_events SET status = 'dead_letter', locked_by = NULL, locked_until = NULL WHERE id = $1`,
		waiter: func(ctx context.Context, tx ports.Tx, id uuid.UUID) (bool, error) {
			return tx.OutboxDispatch().Release(ctx, "d1", id, time.Now(), "try again")
		},
		want: false, status: model.OutboxDeadLetter,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			ws := uuid.New()
			ev := claimedEventIn(t, uow, ws, "d1")

			mover, err := super.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer func() { _ = mover.Rollback() }()
			_, err = mover.ExecContext(ctx, c.move, ev)
			require.NoError(t, err)

			type result struct {
				ok  bool
				err error
			}
			done := make(chan result, 1)
			go func() {
				var r result
				r.err = uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
					var err error
					r.ok, err = c.waiter(ctx, tx, ev)
					return err
				})
				done <- r
			}()
			waitForLockWaiter(t, super)
			require.NoError(t, mover.Commit())

			r := <-done
			require.NoError(t, r.err)
			require.Equal(t, c.want, r.ok)
			var status string
			require.NoError(t, super.QueryRowContext(ctx, `SELECT status FROM outbox_events WHERE id = $1`, ev).Scan(&status))
			require.Equal(t, string(c.status), status)
		})
	}
}

// claimedEventIn appends an event to ws and claims it as owner.
func claimedEventIn(t *testing.T, uow *postgres.UnitOfWork, ws uuid.UUID, owner string) uuid.UUID {
	t.Helper()
	ev, err := model.NewOutboxEvent(newID(t), ws, "test.event", "thing", uuid.New(), struct{}{}, time.Now())
	require.NoError(t, err)
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Outbox().Append(ctx, ev) })
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		claim, err := tx.OutboxDispatch().ClaimDue(ctx, owner, time.Now().Add(time.Second), time.Minute, 1, 10)
		require.Len(t, claim.Events, 1)
		return err
	})
	return ev.ID
}

// waitForLockWaiter returns once a session of the test's database waits
// for a lock: the statement under test is blocked behind the mover.
func waitForLockWaiter(t *testing.T, super *sql.DB) {
	t.Helper()
	require.Eventually(t, func() bool {
		var n int
		err := super.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		return err == nil && n > 0
	}, 30*time.Second, 10*time.Millisecond)
}
