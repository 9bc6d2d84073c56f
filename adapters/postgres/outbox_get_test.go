package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// An event is read by id (Outbox.Get: a worker checking each message
// against its event, jobs.Stored) from the partitions it can be in, not
// from every slice of the dispatched history: with three days of hourly
// slices, Get of a recent event scans at most four partitions (the
// queue's, the dead letters' and the one or two dispatched slices around
// now; without the bounds it was all 78), counted by
// pg_stat_xact_user_tables in Get's own transaction. And it still finds
// every event wherever it is: queued, dead-lettered, dispatched far from
// its id's time (clocks apart), or named by an id that is no UUIDv7;
// another workspace's event or an unknown id is CodeNotFound.
func TestGetReadsAnEventFromThePartitionsItCanBeIn(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	uow := postgres.NewUnitOfWork(db.App)
	now := time.Now().UTC()
	partitions, made := postgres.NewOutboxPartitions(db.App, time.Hour), 0
	for at := now.Add(-72 * time.Hour); !at.After(now); at = at.Add(3 * time.Hour) {
		n, err := partitions.Prepare(ctx, at)
		require.NoError(t, err)
		made += n
	}
	require.Greater(t, made, 70)

	ws, other := newID(t), newID(t)
	event := func(id uuid.UUID, ws uuid.UUID) model.OutboxEvent {
		e, err := model.NewOutboxEvent(id, ws, "test.event", "thing", uuid.New(), map[string]string{"n": id.String()}, now)
		require.NoError(t, err)
		return e
	}
	recent, queued, dead, skewed, v4, others := event(newID(t), ws), event(newID(t), ws), event(newID(t), ws),
		event(newID(t), ws), event(uuid.New(), ws), event(newID(t), other)
	for _, e := range []model.OutboxEvent{recent, queued, dead, skewed, v4, others} {
		transact(t, uow, e.WorkspaceID, func(ctx context.Context, tx ports.Tx) error { return tx.Outbox().Append(ctx, e) })
	}
	// Marked as the Dispatcher marks them; skewed by a clock two days
	// behind its id's.
	for id, at := range map[uuid.UUID]time.Time{recent.ID: now, v4.ID: now, others.ID: now, skewed.ID: now.Add(-48 * time.Hour)} {
		_, err := db.Owner.ExecContext(ctx, `UPDATE outbox_events SET status = 'dispatched', dispatched_at = ? WHERE id = ?`, at, id)
		require.NoError(t, err)
	}
	_, err := db.Owner.ExecContext(ctx, `UPDATE outbox_events SET status = 'dead_letter' WHERE id = ?`, dead.ID)
	require.NoError(t, err)

	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		// The backend's counts not yet flushed, which may hold earlier
		// transactions' of the same connection: Get's are the difference.
		scans := func() map[string]int64 {
			var rows []struct {
				Relname string `bun:"relname"`
				Scans   int64  `bun:"scans"`
			}
			require.NoError(t, postgres.TxDB(tx.(*postgres.Tx)).NewRaw(`
SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS scans
  FROM pg_stat_xact_user_tables WHERE relname LIKE 'outbox_events%'`).Scan(ctx, &rows))
			out := map[string]int64{}
			for _, r := range rows {
				out[r.Relname] = r.Scans
			}
			return out
		}
		before := scans()
		got, err := tx.Outbox().Get(ctx, recent.ID)
		require.NoError(t, err)
		require.Equal(t, recent.ID, got.ID)
		var scanned []string
		for name, n := range scans() {
			if n > before[name] {
				scanned = append(scanned, name)
			}
		}
		require.LessOrEqual(t, len(scanned), 4, "partitions scanned by Get: %v", scanned)
		return nil
	})

	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		for name, e := range map[string]model.OutboxEvent{"queued": queued, "dead": dead, "skewed": skewed, "v4": v4} {
			got, err := tx.Outbox().Get(ctx, e.ID)
			require.NoError(t, err, name)
			require.Equal(t, e.ID, got.ID, name)
			require.JSONEq(t, string(e.Payload), string(got.Payload), name)
		}
		for name, id := range map[string]uuid.UUID{"another workspace's": others.ID, "unknown": newID(t)} {
			_, err := tx.Outbox().Get(ctx, id)
			require.True(t, domain.IsCode(err, domain.CodeNotFound), "%s: %v", name, err)
		}
		return nil
	})
}
