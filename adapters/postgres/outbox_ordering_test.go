package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// Within an ordering key, commit order is the outbox's order: a second
// transaction appending to a key waits, on the key's advisory lock, for the
// first one to end, and only then draws its key_seq. Without the wait, the
// second could commit first with the larger key_seq, and a Dispatcher
// would hand its event out before the first one existed for it. The wait
// is observed in pg_stat_activity, not timed.
func TestAppendsOfOneKeyTakeTurnsInCommitOrder(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := newUoW(db)
	ws := seedWorkspace(t, uow, t0.Add(time.Hour))
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })

	keyed := func() model.OutboxEvent {
		e, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, "test.event", "thing", uuid.New(), struct{}{}, time.Now())
		require.NoError(t, err)
		e.OrderingKey = "store/a"
		return e
	}
	first, second := keyed(), keyed()

	firstAppended, releaseFirst := make(chan struct{}), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.Outbox().Append(ctx, first); err != nil {
				return err
			}
			close(firstAppended)
			<-releaseFirst
			return nil
		})
	}()
	<-firstAppended
	secondDone := make(chan error, 1)
	go func() {
		secondDone <- uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Outbox().Append(ctx, second)
		})
	}()

	// The second waits on an advisory lock while the first is open; it
	// must not commit before.
	for waiting := false; !waiting; {
		select {
		case err := <-secondDone:
			close(releaseFirst)
			require.NoError(t, <-firstDone)
			t.Fatalf("the second append of the key committed while the first transaction was open (err %v)", err)
		default:
		}
		require.NoError(t, super.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory')`).Scan(&waiting))
	}
	close(releaseFirst)
	require.NoError(t, <-firstDone)
	require.NoError(t, <-secondDone)

	var firstSeq, secondSeq int64
	require.NoError(t, super.QueryRow(`SELECT (SELECT key_seq FROM outbox_events WHERE id = $1), (SELECT key_seq FROM outbox_events WHERE id = $2)`,
		first.ID, second.ID).Scan(&firstSeq, &secondSeq))
	require.Less(t, firstSeq, secondSeq, "the first to commit comes first in its key")
}
