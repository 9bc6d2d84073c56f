package tracing_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/adapters/tracing"
)

// A statement is summed up by its operation and its table, as bun and our
// reviewed SQL write them; its values never appear.
func TestSQLSummaryNamesTheOperationAndTheTableOnly(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{`SELECT "o"."id", "o"."kind" FROM "operations" AS "o" WHERE (workspace_id = '3f0c7d2e-0000-4000-8000-000000000001') ORDER BY id DESC LIMIT 21`, "SELECT operations"},
		{`INSERT INTO "stores" ("id", "name") VALUES ('0193a3b4-7c2d-7e8f-9a0b-1c2d3e4f5a6b', 'My shop secret-name')`, "INSERT stores"},
		{`UPDATE "operations" AS "o" SET "status" = 'failed', "error" = 'credentials refused' WHERE ("o"."id" = '0193')`, "UPDATE operations"},
		{"\nUPDATE outbox_events\n   SET status = 'dispatched'\n WHERE workspace_id = ?1", "UPDATE outbox_events"},
		{"DELETE FROM idempotency_requests\n WHERE ctid = ANY (ARRAY(SELECT ctid FROM x))", "DELETE idempotency_requests"},
		{"WITH pending AS (SELECT id FROM outbox_events WHERE status = 'pending' FOR UPDATE SKIP LOCKED)\nUPDATE outbox_events SET status = 'dispatching' FROM pending", "UPDATE outbox_events"},
		{"WITH u AS (\nUPDATE stores SET name = $1 WHERE id = $2\nRETURNING 1)\nSELECT once_expect_row(count(*), 'store') FROM u", "UPDATE stores"},
		{"WITH e AS (SELECT id FROM events) SELECT * FROM e", "SELECT e"},
		{"WITH x AS (SELECT id FROM t FOR UPDATE SKIP LOCKED) SELECT id FROM x", "SELECT x"},
		{"BEGIN; SELECT set_config('app.workspace_id', '3f0c7d2e-0000-4000-8000-000000000001', true)", "BEGIN"},
		{"SELECT status, events, oldest_due_at FROM once_outbox_stats('2026-01-02'::timestamptz)", "SELECT"},
		{"SELECT extract(epoch FROM now()), 1 FROM \"media\"", "SELECT media"},
		{"-- a comment naming nothing\n/* nor this */ select 1", "SELECT"},
		{"COMMIT", "COMMIT"},
		{"  ", "SQL"},
		{"'just a literal'", "SQL"},
	} {
		assert.Equal(t, tc.want, tracing.SQLSummary(tc.sql).String(), tc.sql)
	}
}
