package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
)

// The outbox's counts cost the same at any size of the dispatched history
// (sql/011_outbox_stats_estimate.sql): past 64 MB of dispatched events the
// count is the planner's estimate, read from the catalog, not a pass over
// the history; the queue and the dead letters stay exact.
func TestOutboxStatsEstimateALargeHistoryWithoutReadingIt(t *testing.T) {
	db, super := largeTableDB(t, "writes 250k rows")
	ctx := context.Background()

	const history = 250_000
	now := time.Now().UTC()
	_, err := super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, created_at, dispatched_at)
SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad(to_hex(i % 10), 12, '0'))::uuid,
       'test.event', 'thing', gen_random_uuid(), jsonb_build_object('padding', repeat('x', 150)),
       k.status, 1, $1::timestamptz, $1::timestamptz - interval '1 hour',
       CASE WHEN k.status = 'dispatched' THEN $1::timestamptz - interval '30 minutes' END
  FROM (VALUES ('dispatched', $2::int), ('pending', 7), ('dead_letter', 3)) AS k(status, n),
       generate_series(1, k.n) AS i`, now, history)
	require.NoError(t, err)
	_, err = super.ExecContext(ctx, `VACUUM ANALYZE outbox_events`)
	require.NoError(t, err)
	var bytes int64
	require.NoError(t, super.QueryRowContext(ctx, `SELECT sum(pg_relation_size(relid)) FROM pg_partition_tree('outbox_events_dispatched') WHERE isleaf`).Scan(&bytes))
	require.Greater(t, bytes, int64(64<<20), "the history must be past the exact count's limit")

	stats, err := postgres.NewOutboxDiscovery(db.App).Stats(ctx, now)
	require.NoError(t, err)
	require.Equal(t, int64(7), stats.ByStatus[model.OutboxPending])
	require.Equal(t, int64(3), stats.ByStatus[model.OutboxDeadLetter])
	require.InDelta(t, history, stats.ByStatus[model.OutboxDispatched], history/10)

	// The second call on the same connection: the first also reads the
	// catalog into the session's caches, hundreds of pages at any size.
	super.SetMaxOpenConns(1)
	explainAnalyze(t, super, `SELECT * FROM once_outbox_stats($1)`, now)
	_, pages, plan := explainAnalyze(t, super, `SELECT * FROM once_outbox_stats($1)`, now)
	require.Less(t, pages, 200, "pages read for the counts:\n%s", plan)
}
