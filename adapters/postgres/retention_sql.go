package postgres

import "github.com/oncehq/once/domain/model"

// selectExpiredWorkspaces is the discovery of the retention cleanup: the
// SECURITY DEFINER skip scan of sql/008_retention.sql, ids only.
const selectExpiredWorkspacesOf = `SELECT once_expired_workspaces(?::text, ?::timestamptz, ?::int)`

// deleteExpired removes at most a batch (?2) of one workspace's (?0)
// records of a kind that finished before the horizon (?1), oldest first,
// through the partial indexes of 008. Each is bounded so one call is one
// short transaction, and skips rows another transaction holds (SKIP
// LOCKED: a concurrent cleaner, or a worker finishing a task). Only what
// the "finished" predicate names can go: never a pending or running
// operation or task, never an event not yet delivered.
var deleteExpired = map[model.Expiring]string{
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
	// outbox_events_operation_idx.
	model.ExpiringOperations: `
DELETE FROM operations
 WHERE ctid = ANY (ARRAY(
        SELECT o.ctid FROM operations o
         WHERE o.workspace_id = ?0 AND o.status IN ('succeeded', 'failed') AND o.updated_at < ?1
           AND NOT EXISTS (SELECT 1 FROM outbox_events e
                            WHERE e.workspace_id = o.workspace_id
                              AND e.event_payload->>'operation_id' = o.id::text
                              AND e.status <> 'dispatched')
         ORDER BY o.updated_at
         LIMIT ?2
           FOR UPDATE OF o SKIP LOCKED))`,

	model.ExpiringCatalogSyncs: `
DELETE FROM catalog_syncs
 WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM catalog_syncs
         WHERE workspace_id = ?0 AND status IN ('succeeded', 'failed') AND updated_at < ?1
         ORDER BY updated_at
         LIMIT ?2
           FOR UPDATE SKIP LOCKED))`,

	// A transfer's items go with it, in the same statement (their foreign
	// key is checked at its end).
	model.ExpiringMaterialTransfers: `
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

	// Only failed publications: a live or succeeded one is the "no
	// duplicate publish" rule (publications_active_key).
	model.ExpiringPublications: `
DELETE FROM publications
 WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM publications
         WHERE workspace_id = ?0 AND status = 'failed' AND updated_at < ?1
         ORDER BY updated_at
         LIMIT ?2
           FOR UPDATE SKIP LOCKED))`,

	// A billed AI task stays: its billing record refers to it.
	model.ExpiringAITasks: `
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
