package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The claim and the discovery of due workspaces read only the queue's
// partial indexes, however much history outbox_events holds: on a table
// with 200k dispatched events over three days of partitions, 1k dead
// letters and a 20k-event queue over 100 workspaces, their plans use
// outbox_events_pending_idx and outbox_events_dispatching_idx, scan no
// table sequentially, and never visit the dispatched or dead partitions
// but through outbox_events_key_idx, the probe of an ordering key's earlier
// events (sql/021_ordering_in_the_outbox.sql) that only a keyed candidate
// makes. The wake after an outage reads outbox_events_parked_idx, which
// the claim never uses.
func TestClaimAndDiscoveryUseTheQueueIndexesOnALargeTable(t *testing.T) {
	db, super := largeTableDB(t, "writes 220k rows")
	ctx := context.Background()

	now := time.Now().UTC()
	_, err := postgres.NewOutboxPartitions(db.App, 24*time.Hour).Prepare(ctx, now.Add(-72*time.Hour))
	require.NoError(t, err)
	_, err = super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, locked_by, locked_until, created_at, dispatched_at)
SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad(to_hex(i % 100), 12, '0'))::uuid,
       'test.event', 'thing', gen_random_uuid(), jsonb_build_object('operation_id', gen_random_uuid()),
       k.status, 1,
       -- most of the queue is not due yet (backoff), a few events are
       $1::timestamptz + CASE WHEN i % 50 = 0 THEN interval '-1 minute' ELSE interval '1 hour' END,
       CASE WHEN k.status = 'dispatching' THEN 'd' END,
       CASE WHEN k.status = 'dispatching' THEN $1::timestamptz + interval '1 minute' END,
       $1::timestamptz - interval '3 days',
       CASE WHEN k.status = 'dispatched' THEN $1::timestamptz - interval '70 hours' * i / k.n END
  FROM (VALUES ('dispatched', 200000), ('dead_letter', 1000), ('pending', 18000), ('dispatching', 2000)) AS k(status, n),
       generate_series(1, k.n) AS i`, now)
	require.NoError(t, err)
	// A tenth of the pending events a worker parked, most for an outage.
	_, err = super.ExecContext(ctx, `
UPDATE outbox_events_live
   SET wait_kind = CASE WHEN random() < 0.8 THEN 'outage' ELSE 'paced' END,
       waited_for = CASE WHEN random() < 0.5 THEN 'shopify' ELSE 'amazon' END
 WHERE status = 'pending' AND random() < 0.1`)
	require.NoError(t, err)
	_, err = super.ExecContext(ctx, `ANALYZE outbox_events`)
	require.NoError(t, err)

	ws := uuid.MustParse("00000000-0000-7000-8000-000000000007")
	tx, err := db.App.DB.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `SELECT set_config('app.workspace_id', $1, true)`, ws.String())
	require.NoError(t, err)
	claim := explain(t, tx.QueryContext, postgres.ClaimDueEventsSQL,
		ws, now, 100, "explainer", now.Add(time.Minute), 10, model.LeaseExpiredErrorFormat)
	requireQueueIndexesOnly(t, "claim", claim)
	require.NotContains(t, claim, "outbox_events_parked_idx", "the claim keeps to the pending index:\n%s", claim)

	// The wake after an outage reads the parked events of one kind and
	// destination only (sql/023_job_waits_backfill.sql).
	wake := explain(t, tx.QueryContext, postgres.WakeParkedSQL, now, 1000, ws, "outage", "shopify", 30_000_000)
	t.Logf("wake plan:\n%s", wake)
	require.Contains(t, wake, "outbox_events_parked_idx", "wake plan:\n%s", wake)
	require.NotContains(t, wake, "Seq Scan", "wake plan:\n%s", wake)

	// The discovery function's body as once_discovery runs it (it sees
	// every workspace), with its parameters filled in.
	body := dueWorkspacesQuery(t, super)
	discovery := explain(t, super.QueryContext, body, now)
	requireQueueIndexesOnly(t, "discovery", discovery)
}

// largeTableDB is a fresh database and its superuser's connection, for the
// tests that fill a table in bulk (what, for the skip message) and read
// their statements' plans. Skipped with -short.
func largeTableDB(t *testing.T, what string) (*pgtest.DB, *sql.DB) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
	t.Parallel()
	db := pgtest.New(t)
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	return db, super
}

// dueWorkspacesQuery is the query of once_outbox_due_workspaces, as
// once_discovery runs it (it sees every workspace), with its parameters
// filled in but p_now ($1): the body of its RETURN QUERY
// (sql/031_due_workspaces_planned_once.sql).
func dueWorkspacesQuery(t *testing.T, super *sql.DB) string {
	t.Helper()
	var lang, body string
	require.NoError(t, super.QueryRowContext(context.Background(), `
SELECT l.lanname, p.prosrc FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.proname = 'once_outbox_due_workspaces'`).Scan(&lang, &body))
	// Planned once per session, not at every call, as a SQL function's
	// body is.
	require.Equal(t, "plpgsql", lang)
	_, query, found := strings.Cut(body, "RETURN QUERY")
	require.True(t, found, "no RETURN QUERY in:\n%s", body)
	query, _, found = strings.Cut(query, ";")
	require.True(t, found, "no end of the query in:\n%s", body)
	return strings.NewReplacer("p_now", "$1::timestamptz", "p_after", "'00000000-0000-0000-0000-000000000000'::uuid", "p_limit", "100").Replace(query)
}

func explain(t *testing.T, query func(context.Context, string, ...any) (*sql.Rows, error), stmt string, args ...any) string {
	t.Helper()
	rows, err := query(context.Background(), "EXPLAIN "+stmt, args...)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan = append(plan, line)
	}
	require.NoError(t, rows.Err())
	return strings.Join(plan, "\n")
}

func requireQueueIndexesOnly(t *testing.T, what, plan string) {
	t.Helper()
	t.Logf("%s plan:\n%s", what, plan)
	for _, index := range []string{"outbox_events_pending_idx", "outbox_events_dispatching_idx"} {
		require.Contains(t, plan, index, "%s plan:\n%s", what, plan)
	}
	require.NotContains(t, plan, "Seq Scan", "%s plan:\n%s", what, plan)
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "outbox_events_dispatched") || strings.Contains(line, "outbox_events_dead") {
			require.Contains(t, line, "_ordering_key_", "%s plan visits the history other than by a key's probe:\n%s", what, plan)
		}
	}
}

// Finding the due workspaces costs a few index probes per workspace
// visited, however large one workspace's backlog is: with 200k events
// pending in one workspace and a few due in seven others, the discovery
// reads a few dozen pages. (The planner once turned its "has a due event"
// test into a merge semi join that read the whole pending index on every
// call: 27-55 ms per Dispatcher round with a 500k backlog; see
// sql/010_discovery_probes.sql.)
func TestDiscoveryReadsNoBacklog(t *testing.T) {
	_, super := largeTableDB(t, "writes 200k rows")
	ctx := context.Background()

	now := time.Now().UTC()
	_, err := super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, next_attempt_at)
SELECT gen_random_uuid(), '00000000-0000-7000-8000-000000000001', 'test.event', 'thing', gen_random_uuid(), '{}'::jsonb,
       $1::timestamptz - interval '1 hour' + i * interval '1 millisecond'
  FROM generate_series(1, 200000) AS i
UNION ALL
SELECT gen_random_uuid(), ('00000000-0000-7000-8000-00000000000' || w)::uuid, 'test.event', 'thing', gen_random_uuid(), '{}'::jsonb,
       $1::timestamptz - interval '1 second'
  FROM generate_series(2, 8) AS w, generate_series(1, 3)`, now)
	require.NoError(t, err)
	_, err = super.ExecContext(ctx, `VACUUM ANALYZE outbox_events`)
	require.NoError(t, err)

	body := dueWorkspacesQuery(t, super)
	// With the statistics ANALYZE sampled, and with the ones a sample that
	// met only the large backlog gives (one workspace holding every row,
	// which a sample of 30,000 rows misses the 21 others' rows often
	// enough to fail one run in a few): then a plain scan stopping at the
	// first due row looked cheap, and each probe read the whole table.
	for _, nDistinct := range []string{"", "1"} {
		if nDistinct != "" {
			_, err = super.ExecContext(ctx, `ALTER TABLE outbox_events_live ALTER COLUMN workspace_id SET (n_distinct = `+nDistinct+`)`)
			require.NoError(t, err)
			_, err = super.ExecContext(ctx, `ANALYZE outbox_events`)
			require.NoError(t, err)
		}
		rows, pages, plan := explainAnalyze(t, super, body, now)
		require.Equal(t, 8, rows, "every workspace has a due event: %s", plan)
		require.Less(t, pages, 100, "n_distinct %q: pages read to find 8 due workspaces:\n%s", nDistinct, plan)
	}
}

// explainAnalyze runs stmt under EXPLAIN (ANALYZE, BUFFERS) and returns the
// rows it returned, the pages it read (shared buffers hit or read, its
// functions' statements included) and the plan.
func explainAnalyze(t *testing.T, db *sql.DB, stmt string, args ...any) (rows, pages int, plan string) {
	t.Helper()
	require.NoError(t, db.QueryRowContext(context.Background(), "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+stmt, args...).Scan(&plan))
	var explained []struct {
		Plan struct {
			ActualRows int `json:"Actual Rows"`
			Hit        int `json:"Shared Hit Blocks"`
			Read       int `json:"Shared Read Blocks"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(plan), &explained))
	require.Len(t, explained, 1)
	top := explained[0].Plan
	return top.ActualRows, top.Hit + top.Read, plan
}
