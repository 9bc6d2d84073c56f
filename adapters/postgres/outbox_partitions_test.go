package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
	"github.com/oncehq/once/testsupport/pgtest"
)

// walRetentionEvents is the size of the WAL measurement: a million
// dispatched events, as docs/benchmarks.md ("Retention's cost") reports.
const walRetentionEvents = 1_000_000

// Retention of 1M dispatched events writes less than 10 MB of WAL (a
// batched DELETE of as many wrote 307 MB): the cleaner drops their
// partition. Measured with pg_current_wal_lsn() on a private cluster, so
// no other test's writes count.
func TestDroppingAMillionDispatchedEventsWritesLittleWAL(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a million rows")
	}
	t.Parallel()
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, "", 20)
	t.Cleanup(func() { _ = cluster.Remove() })
	if err != nil {
		t.Skipf("no private PostgreSQL cluster here: %v", err)
	}
	db, err := pgsandbox.Create(ctx, cluster.SuperuserDSN(), "once_wal")
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	require.NoError(t, err)
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })

	hour := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Hour)
	partitions := postgres.NewOutboxPartitions(db.App, time.Hour)
	made, err := partitions.Prepare(ctx, hour)
	require.NoError(t, err)
	require.Positive(t, made)
	_, err = super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, created_at, dispatched_at)
SELECT gen_random_uuid(), ws.id, 'store.credentials.verify', 'store', gen_random_uuid(),
       jsonb_build_object('store_id', gen_random_uuid(), 'credential_version', 1, 'operation_id', gen_random_uuid()),
       'dispatched', 1, $1::timestamptz, $1::timestamptz, $1::timestamptz + (i % 3600) * interval '1 second'
  FROM generate_series(1, $2::int) AS i,
       LATERAL (SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(i % 100), 12, '0'))::uuid AS id) ws`,
		hour, walRetentionEvents)
	require.NoError(t, err)
	_, err = super.ExecContext(ctx, `ANALYZE outbox_events`)
	require.NoError(t, err)

	var before string
	require.NoError(t, super.QueryRowContext(ctx, `SELECT pg_current_wal_insert_lsn()`).Scan(&before))
	events, rowsBefore, err := partitions.DropDispatchedBefore(ctx, hour.Add(time.Hour))
	require.NoError(t, err)
	var wal int64
	require.NoError(t, super.QueryRowContext(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint`, before).Scan(&wal))
	t.Logf("retention of %d dispatched events: %d bytes of WAL", events, wal)

	require.InDelta(t, walRetentionEvents, events, walRetentionEvents/10, "about the million, from the statistics")
	require.Less(t, wal, int64(10<<20), "WAL of the retention")
	require.False(t, rowsBefore.After(hour.Add(time.Hour)))
	var left int
	require.NoError(t, super.QueryRowContext(ctx, `SELECT count(*) FROM outbox_events`).Scan(&left))
	require.Zero(t, left)
}

// Prepare makes the slices once, however often and from however many
// processes it is called; a partition of another width that covers a
// slice is kept, and the next free slice is made.
func TestPreparePartitionsIsIdempotent(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	at := time.Date(2030, 1, 1, 10, 30, 0, 0, time.UTC)

	hourly := postgres.NewOutboxPartitions(db.App, time.Hour)
	made, err := hourly.Prepare(ctx, at)
	require.NoError(t, err)
	require.Equal(t, 3, made, "10:00, 11:00 and 12:00")
	made, err = hourly.Prepare(ctx, at)
	require.NoError(t, err)
	require.Zero(t, made)

	quarter := postgres.NewOutboxPartitions(db.App, 15*time.Minute)
	made, err = quarter.Prepare(ctx, at.Add(2*time.Hour+20*time.Minute)) // 12:50: 12:45 and 13:00 are covered, 13:15 is not
	require.NoError(t, err)
	require.Equal(t, 2, made, "13:00 and 13:15")

	var ranges []string
	require.NoError(t, db.Owner.NewRaw(`SELECT to_char(from_at AT TIME ZONE 'UTC', 'HH24:MI') || '-' || to_char(to_at AT TIME ZONE 'UTC', 'HH24:MI')
  FROM once_outbox_dispatched_ranges()`).Scan(ctx, &ranges))
	require.Equal(t, []string{"10:00-11:00", "11:00-12:00", "12:00-13:00", "13:00-13:15", "13:15-13:30"}, ranges)
}
