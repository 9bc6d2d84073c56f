package postgres_test

import (
	"context"
	"database/sql"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	schema "github.com/oncehq/once/sql"
	"github.com/oncehq/once/testsupport/pgtest"
)

// migrationsBefore is the schema's migrations older than version.
func migrationsBefore(t *testing.T, version string) fstest.MapFS {
	t.Helper()
	names, err := fs.Glob(schema.FS, "*.sql")
	require.NoError(t, err)
	out := fstest.MapFS{}
	for _, name := range names {
		if name < version {
			body, err := fs.ReadFile(schema.FS, name)
			require.NoError(t, err)
			out[name] = &fstest.MapFile{Data: body}
		}
	}
	return out
}

// databaseBefore is a database migrated up to (not including) version,
// and a superuser's connection to it, which writes rows as an older
// version left them (row-level security does not bind it).
func databaseBefore(t *testing.T, version string) (*pgtest.DB, *sql.DB) {
	t.Helper()
	db := pgtest.NewWithSchema(t, migrationsBefore(t, version))
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	return db, super
}

// outboxFingerprint is every column of every outbox row, in id order, as
// one hash, with the count per status: equal before and after means no
// row was lost, added or changed.
const outboxFingerprint = `
SELECT md5(string_agg(concat_ws('|', id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload,
                                status, attempt_count, next_attempt_at, locked_by, locked_until, last_error,
                                traceparent, created_at, dispatched_at, dead_lettered_at), ',' ORDER BY id)),
       string_agg(DISTINCT s.counts, ',')
  FROM outbox_events,
       LATERAL (SELECT string_agg(status || '=' || n, ' ' ORDER BY status) AS counts
                  FROM (SELECT status, count(*) AS n FROM outbox_events GROUP BY status) c) s`

// A database at 008 with events in every status migrates to 009 with each
// one intact, in the partition of its status, and the Dispatcher can go on:
// due pending events are claimed, an expired lease is taken over, and the
// mark moves events into the dispatched history.
func TestMigrationToPartitionsKeepsEveryEvent(t *testing.T) {
	t.Parallel()
	db := pgtest.NewWithSchema(t, migrationsBefore(t, "009"))
	ctx := context.Background()
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })

	wsA, wsB := uuid.New(), uuid.New()
	now := time.Now().UTC()
	// The superuser writes the rows as the previous version left them
	// (row-level security does not bind it). Per workspace: 300 due
	// pending, 50 dispatching with an expired lease and 50 with a live
	// one, 40 dead letters, 2000 dispatched over the last 10 days and 20
	// dispatched 100 days ago (older than the partitions 009 makes).
	_, err = super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, locked_by, locked_until, last_error, traceparent,
                           created_at, dispatched_at, dead_lettered_at)
SELECT gen_random_uuid(), ws, 'store.credentials.verify', 'store', gen_random_uuid(),
       jsonb_build_object('store_id', gen_random_uuid(), 'operation_id', gen_random_uuid()),
       k.status, k.attempts, $3::timestamptz - interval '1 minute' * i,
       CASE WHEN k.status = 'dispatching' THEN 'old-dispatcher' END,
       CASE WHEN k.status = 'dispatching' THEN $3::timestamptz + k.lease END,
       CASE WHEN k.status = 'dead_letter' THEN 'boom ' || i END,
       '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
       $3::timestamptz - k.back - k.age * i / k.n - interval '1 second',
       CASE WHEN k.status = 'dispatched' THEN $3::timestamptz - k.back - k.age * i / k.n END,
       CASE WHEN k.status = 'dead_letter' THEN $3::timestamptz - interval '1 hour' END
  FROM unnest(ARRAY[$1::uuid, $2::uuid]) AS ws,
       (VALUES ('pending', 300, 0, interval '0', interval '0', interval '1 day'),
               ('dispatching', 50, 1, interval '-1 minute', interval '0', interval '1 hour'),
               ('dispatching', 50, 1, interval '10 minutes', interval '0', interval '1 hour'),
               ('dead_letter', 40, 10, interval '0', interval '0', interval '3 days'),
               ('dispatched', 2000, 1, interval '0', interval '0', interval '10 days'),
               ('dispatched', 20, 1, interval '0', interval '100 days', interval '1 day')) AS k(status, n, attempts, lease, back, age),
       generate_series(1, k.n) AS i`, wsA, wsB, now)
	require.NoError(t, err)

	var before, beforeCounts string
	require.NoError(t, super.QueryRowContext(ctx, outboxFingerprint).Scan(&before, &beforeCounts))

	require.NoError(t, postgres.Migrate(ctx, db.Owner, schema.FS))
	pending, err := postgres.PendingMigrations(ctx, db.App, schema.FS)
	require.NoError(t, err)
	require.Empty(t, pending)

	var after, afterCounts string
	require.NoError(t, super.QueryRowContext(ctx, outboxFingerprint).Scan(&after, &afterCounts))
	require.Equal(t, beforeCounts, afterCounts)
	require.Equal(t, before, after, "every column of every event as it was")

	// Each status in its partition; dispatched events of the last days in
	// daily partitions, the 100-day-old ones in the default partition.
	rows, err := super.QueryContext(ctx, `
SELECT status,
       CASE WHEN tableoid::regclass::text LIKE 'outbox_events_dispatched_2%' THEN 'outbox_events_dispatched_<day>'
            ELSE tableoid::regclass::text END AS part,
       count(*)
  FROM outbox_events GROUP BY 1, 2 ORDER BY 1, 2`)
	require.NoError(t, err)
	placed := map[string]int{}
	for rows.Next() {
		var status, part string
		var n int
		require.NoError(t, rows.Scan(&status, &part, &n))
		placed[status+" in "+part] = n
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]int{
		"pending in outbox_events_live":                  600,
		"dispatching in outbox_events_live":              200,
		"dead_letter in outbox_events_dead":              80,
		"dispatched in outbox_events_dispatched_<day>":   4000,
		"dispatched in outbox_events_dispatched_default": 40,
	}, placed)

	// The Dispatcher goes on where the old version stopped.
	claims := postgres.NewOutboxClaims(postgres.NewUnitOfWork(db.App))
	claim, err := claims.ClaimDue(ctx, wsA, "new-dispatcher", now, time.Minute, 1000, 10)
	require.NoError(t, err)
	require.Len(t, claim.Events, 300, "every due pending event of the workspace")
	require.Len(t, claim.TakenOver, 1, "one expired lease at a time")
	ids := eventIDsOf(claim.Events)
	n, err := claims.MarkDispatched(ctx, wsA, "new-dispatcher", ids, now)
	require.NoError(t, err)
	require.Equal(t, 300, n)
	var inHistory int
	require.NoError(t, super.QueryRowContext(ctx, `
SELECT count(*) FROM outbox_events
 WHERE id = ANY ($1::uuid[]) AND status = 'dispatched' AND tableoid::regclass::text LIKE 'outbox_events_dispatched_%'`,
		uuidTexts(ids)).Scan(&inHistory))
	require.Equal(t, 300, inHistory)
}

func eventIDsOf(events []model.OutboxEvent) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func uuidTexts(ids []uuid.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return "{" + strings.Join(s, ",") + "}"
}
