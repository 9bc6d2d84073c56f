package postgres

// The statements of OutboxDispatch and OutboxDiscovery. They decide whether
// an event is delivered at least once and whether two Dispatchers can step
// on each other, so they live here, together.
//
// Every statement runs in a transaction of one workspace, as the
// application role, with app.workspace_id set: row-level security limits it
// to that workspace, and a transaction without a workspace sees and claims
// nothing. Each also names the workspace explicitly (workspace_id = ?), so
// the partial indexes of sql/001 and sql/002, which lead with workspace_id,
// are used with both columns. Predicates are plain built-in operators, so
// the planner can combine them with the policy's (DESIGN §8).
//
// Placeholders are bun's: '?' in order, '?N' by position.

// claimDueEvents claims up to ?2 due events: pending ones whose
// next_attempt_at has come, and dispatching ones whose lease expired (their
// Dispatcher died or stalled between publish and mark). They become
// dispatching, locked by the caller until ?4.
//
// Why this shape:
//   - Two CTEs, one per status, each an ordered, limited scan of its own
//     partial index (pending: (workspace_id, next_attempt_at); dispatching:
//     (workspace_id, locked_until)). A single WHERE (pending AND due) OR
//     (dispatching AND expired) can use neither index in order and turns
//     into a bitmap scan plus sort of every due row of the workspace.
//   - FOR UPDATE SKIP LOCKED in each branch: rows another Dispatcher is
//     claiming right now are skipped, not waited for, and the scan moves on
//     to the next candidates, so N Dispatchers on one workspace share its
//     backlog instead of queueing behind each other. The lock comes with a
//     re-check of the WHERE on the newest row version, so an event another
//     transaction claimed and committed since our snapshot (now dispatching
//     with a future lease) drops out.
//   - LIMIT in each branch, then again over the union ordered by due time:
//     at most ?2 events, oldest due first. A branch may lock a few rows the
//     final LIMIT drops; the claim's transaction is short and those rows
//     become claimable again at its end.
//   - UPDATE ... FROM claimed: the update hits the locked rows by primary
//     key, and RETURNING hands back their new state plus due_at, which
//     ClaimDue sorts by (RETURNING has no order).
const claimDueEvents = `
WITH pending AS (
    SELECT id, next_attempt_at AS due_at
      FROM outbox_events
     WHERE workspace_id = ?0 AND status = 'pending' AND next_attempt_at <= ?1
     ORDER BY next_attempt_at
     LIMIT ?2
       FOR UPDATE SKIP LOCKED
), expired AS (
    SELECT id, locked_until AS due_at
      FROM outbox_events
     WHERE workspace_id = ?0 AND status = 'dispatching' AND locked_until <= ?1
     ORDER BY locked_until
     LIMIT ?2
       FOR UPDATE SKIP LOCKED
), claimed AS (
    SELECT id, due_at FROM pending
    UNION ALL
    SELECT id, due_at FROM expired
    ORDER BY due_at
    LIMIT ?2
)
UPDATE outbox_events e
   SET status = 'dispatching', locked_by = ?3, locked_until = ?4
  FROM claimed c
 WHERE e.workspace_id = ?0 AND e.id = c.id
RETURNING e.id, e.workspace_id, e.event_type, e.aggregate_type, e.aggregate_id, e.event_payload,
          e.status, e.attempt_count, e.next_attempt_at, e.locked_by, e.locked_until,
          e.last_error, e.traceparent, e.created_at, e.dispatched_at, c.due_at`

// markDispatched records that the publisher accepted the events. Fenced:
// only rows still dispatching and locked by the caller change. If our lease
// expired and another Dispatcher re-claimed an event, locked_by is theirs
// and the row is left to them (it has been, or will be, published again:
// at-least-once, consumers deduplicate by event id). The lock columns are
// cleared: they mean something only while dispatching.
const markDispatched = `
UPDATE outbox_events
   SET status = 'dispatched', dispatched_at = ?, locked_by = NULL, locked_until = NULL
 WHERE workspace_id = ? AND id IN (?) AND status = 'dispatching' AND locked_by = ?`

// releaseEvent returns a failed event to pending for a later attempt: the
// caller computed next_attempt_at (backoff with jitter) and sanitized the
// error. Fenced like markDispatched, so a stale Dispatcher cannot undo a
// newer owner's claim or count an attempt twice.
const releaseEvent = `
UPDATE outbox_events
   SET status = 'pending', attempt_count = attempt_count + 1, next_attempt_at = ?,
       last_error = ?, locked_by = NULL, locked_until = NULL
 WHERE workspace_id = ? AND id = ? AND status = 'dispatching' AND locked_by = ?`

// deadLetterEvent parks an event that failed too often, keeping the
// (sanitized) error for operators. Fenced like markDispatched.
const deadLetterEvent = `
UPDATE outbox_events
   SET status = 'dead_letter', attempt_count = attempt_count + 1,
       last_error = ?, locked_by = NULL, locked_until = NULL
 WHERE workspace_id = ? AND id = ? AND status = 'dispatching' AND locked_by = ?`

// redriveEvents / redriveAllEvents give dead letters a fresh start, on an
// operator's request. status = 'dead_letter' leaves every other event alone
// (an id that is pending or dispatched is not touched), and lets the
// all-of-a-workspace form use outbox_events_dead_letter_idx. last_error is
// kept until the next failure overwrites it.
const redriveEvents = `
UPDATE outbox_events
   SET status = 'pending', attempt_count = 0, next_attempt_at = ?
 WHERE workspace_id = ? AND status = 'dead_letter' AND id IN (?)`

const redriveAllEvents = `
UPDATE outbox_events
   SET status = 'pending', attempt_count = 0, next_attempt_at = ?
 WHERE workspace_id = ? AND status = 'dead_letter'`

// deleteDispatchedBefore removes at most a batch of one workspace's events
// delivered before the retention horizon, oldest first, through
// outbox_events_dispatched_idx. Bounded so one call is one short
// transaction and little WAL at a time. ctid = ANY(ARRAY(...)) makes it a TID
// scan of exactly the chosen rows; SKIP LOCKED leaves rows another
// transaction holds (a concurrent cleaner) to it.
const deleteDispatchedBefore = `
DELETE FROM outbox_events
 WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM outbox_events
         WHERE workspace_id = ? AND status = 'dispatched' AND dispatched_at < ?
         ORDER BY dispatched_at
         LIMIT ?
           FOR UPDATE SKIP LOCKED))`

// The discovery functions of sql/002_outbox_dispatch.sql: SECURITY DEFINER,
// callable without any workspace context by members of once_dispatcher,
// returning workspace ids or counts only.
const (
	selectDueWorkspaces        = `SELECT once_outbox_due_workspaces(?::timestamptz, ?::uuid, ?::int)`
	selectDispatchedWorkspaces = `SELECT once_outbox_dispatched_workspaces(?::timestamptz, ?::int)`
	selectOutboxStats          = `SELECT status, events, oldest_due_at FROM once_outbox_stats(?::timestamptz)`
)
