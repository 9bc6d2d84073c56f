package postgres

import (
	"fmt"
	"maps"
	"strings"

	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
)

// selectExpiredWorkspaces is the discovery of the retention cleanup: the
// SECURITY DEFINER skip scan of sql/008_retention.sql, ids only.
const selectExpiredWorkspacesOf = `SELECT once_expired_workspaces(?::text, ?::timestamptz, ?::int)`

// deleteExpired holds, per model.Expiring, the statement that removes at
// most a batch (?2) of one workspace's (?0) records of a kind that
// finished before the horizon (?1), oldest first,
// through the partial indexes of 008. Each is bounded so one call is one
// short transaction, and skips rows another transaction holds (SKIP
// LOCKED: a concurrent cleaner, or a worker finishing a task). Only what
// the "finished" predicate names can go: never a pending or running
// operation or task, never an event not yet delivered.
var deleteExpired = expiryStatements()

// expiryStatements are the statements of the records that are no task
// (dead letters, operations) and of every kind whose rows expire
// (kinds.Expiring): its own statement in ownExpiry, or the plain one
// generated from its table and its retention rule.
func expiryStatements() map[model.Expiring]string {
	out := maps.Clone(notTaskExpiry)
	for _, k := range kinds.Expiring() {
		stmt, own := ownExpiry[k.Table]
		if !own {
			stmt = plainExpiry(k)
		}
		out[model.Expiring(k.Table)] = stmt
	}
	return out
}

// plainExpiry removes a batch of k's rows in the statuses its retention
// lets go, through its partial index of finished rows (an IN of one
// status is parsed as an equality, which the index of 008 matches).
func plainExpiry(k kinds.Kind) string {
	finished := "status IN ('" + strings.Join(k.Retention.FinishedStatuses(), "', '") + "')"
	return fmt.Sprintf(`
DELETE FROM %[1]s
 WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM %[1]s
         WHERE workspace_id = ?0 AND %[2]s AND updated_at < ?1
         ORDER BY updated_at
         LIMIT ?2
           FOR UPDATE SKIP LOCKED))`, k.Table, finished)
}

// notTaskExpiry are the statements of the records that are no task.
var notTaskExpiry = map[model.Expiring]string{
	// By id, in outbox_events_dead: a ctid names a row only within one
	// partition of outbox_events (sql/009_outbox_partitions.sql).
	model.ExpiringDeadLetters: `
DELETE FROM outbox_events
 WHERE workspace_id = ?0 AND status = 'dead_letter'
   AND id = ANY (ARRAY(
        SELECT id FROM outbox_events
         WHERE workspace_id = ?0 AND status = 'dead_letter' AND dead_lettered_at < ?1
         ORDER BY dead_lettered_at
         LIMIT ?2
           FOR UPDATE SKIP LOCKED))`,

	// An operation goes only once no event that still matters refers to
	// it (pending, dispatching or dead-lettered: a redrive would run its
	// job and find no operation to finish), through
	// outbox_events_operation_idx. finished_at is updated_at once the
	// operation is succeeded, failed or cancelled, NULL before (sql/034):
	// its index is the one an operation's start does not write.
	model.ExpiringOperations: `
DELETE FROM operations
 WHERE ctid = ANY (ARRAY(
        SELECT o.ctid FROM operations o
         WHERE o.workspace_id = ?0 AND o.finished_at < ?1
           AND NOT EXISTS (SELECT 1 FROM outbox_events e
                            WHERE e.workspace_id = o.workspace_id
                              AND e.event_payload->>'operation_id' = o.id::text
                              AND e.status <> 'dispatched')
         ORDER BY o.finished_at
         LIMIT ?2
           FOR UPDATE OF o SKIP LOCKED))`,
}

// ownExpiry are the statements of the kinds whose rule is more than their
// finished statuses, by table: what goes with the row, what keeps it.
var ownExpiry = map[string]string{
	// A transfer's items go with it, in the same statement (their foreign
	// key is checked at its end).
	"material_transfers": `
WITH gone AS (
    SELECT id FROM material_transfers
     WHERE workspace_id = ?0 AND status IN ('succeeded', 'failed') AND updated_at < ?1
     ORDER BY updated_at
     LIMIT ?2
       FOR UPDATE SKIP LOCKED
), items AS (
    DELETE FROM material_transfer_items i USING gone
     WHERE i.workspace_id = ?0 AND i.transfer_id = gone.id
)
DELETE FROM material_transfers t USING gone
 WHERE t.workspace_id = ?0 AND t.id = gone.id`,

	// A billed AI task stays: its billing record refers to it.
	"ai_tasks": `
DELETE FROM ai_tasks
 WHERE ctid = ANY (ARRAY(
        SELECT a.ctid FROM ai_tasks a
         WHERE a.workspace_id = ?0 AND a.status IN ('succeeded', 'failed') AND a.updated_at < ?1
           AND NOT EXISTS (SELECT 1 FROM ai_billing_records b
                            WHERE b.workspace_id = a.workspace_id AND b.task_id = a.id)
         ORDER BY a.updated_at
         LIMIT ?2
           FOR UPDATE OF a SKIP LOCKED))`,
}
