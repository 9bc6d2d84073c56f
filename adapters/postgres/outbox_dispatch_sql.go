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
// the planner can combine them with the policy's and use the indexes.
//
// Placeholders are bun's: '?' in order, '?N' by position.

// claimDueEvents claims up to ?2 due events: pending ones whose
// next_attempt_at has come, and at most one dispatching event whose lease
// expired (its Dispatcher died or hung between claim and mark). They become
// dispatching, locked by the caller until ?4. A takeover counts an attempt
// and says why in last_error (?6, formatted with the attempt); one whose
// attempt reaches ?5 (the maximum) is dead-lettered instead of claimed.
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
//   - LIMIT 1 on expired leases: a Dispatcher that crashed or hung held a
//     whole batch, and maybe one event of it is why. Taken over one at a
//     time, the oldest lease first, each is published on its own: the
//     innocent ones get through (each with the one attempt the crash cost
//     it), and the poison one, whose lease is renewed each time it kills a
//     Dispatcher, comes back after them until its attempts run out.
//   - LIMIT ?2 on pending, then again over the union ordered by due time: at
//     most ?2 events, oldest due first. A branch may lock a row the final
//     LIMIT drops; the claim's transaction is short and that row becomes
//     claimable again at its end.
//   - Ordering keys (sql/021_ordering_in_the_outbox.sql): a pending event
//     with a key_seq is claimed only once every earlier event of its key
//     (same workspace, smaller key_seq, which is commit order) has ended,
//     so no worker, however many run, holds two jobs of one key at once or
//     starts them out of order. An earlier event that is pending (waiting,
//     held by a relay, or parked by its worker for a retry), dispatching
//     or dead-lettered has not ended: a dead letter holds its key until an
//     operator redrives or releases it (dispatch.Admin.Release, which
//     retires it as dispatched).
//     A dispatched one has ended once its job's operation is succeeded,
//     failed or cancelled, or is gone (retention removes finished ones
//     only); an event that names no operation has ended once dispatched
//     (nothing more is known of it). Only the latest earlier dispatched
//     event is looked at, not the key's whole history: it was claimed
//     here only after every event before it had ended, and an ended event
//     stays ended, so its own end is the key's. Both tests are probes of
//     outbox_events_key_idx (workspace_id, ordering_key, key_seq) per
//     partition (the dispatched history's included, newest first, one row)
//     and one of operations' primary key (the latest event's operation id
//     is a scalar subquery, so it is a key to look up, not a join to
//     plan), made only for keyed candidates; events without a key
//     (key_seq NULL) pay nothing.
//     Plain operators throughout, so the pending index keeps leading the
//     scan. The price is paid by waiting events: a due event that is
//     blocked is read and probed again by every claim that walks past it
//     in the pending index, so a backlog of many due events behind their
//     keys' earlier jobs (several live jobs per key, which the kinds do
//     not allow yet, or a dead letter holding a busy key) makes each claim
//     longer; such a backlog would want its own index or a per-key head
//     table. Events appended before sql/021 have no key_seq and are not
//     ordered here (the worker still orders them in memory).
//   - UPDATE ... FROM claimed: the update hits the locked rows by id (the
//     status the CTEs locked them in names the partition, so the planner
//     visits outbox_events_live only, not every day of the dispatched
//     history: sql/009_outbox_partitions.sql), and RETURNING hands back their new state plus due_at and
//     taken_over, which ClaimDue sorts and splits by (RETURNING has no
//     order). SET reads the row as locked (its newest version), so the
//     attempt is counted and compared on what is really there; every SET
//     expression sees the old values, so each repeats the same test.
const claimDueEvents = `
WITH pending AS (
    SELECT id, next_attempt_at AS due_at
      FROM outbox_events p
     WHERE workspace_id = ?0 AND status = 'pending' AND next_attempt_at <= ?1
       AND (p.key_seq IS NULL
            OR (NOT EXISTS (
                    SELECT 1 FROM outbox_events b
                     WHERE b.workspace_id = ?0 AND b.ordering_key = p.ordering_key AND b.key_seq < p.key_seq
                       AND b.status IN ('pending', 'dispatching', 'dead_letter'))
                AND NOT EXISTS (
                    SELECT 1 FROM operations o
                     WHERE o.workspace_id = ?0 AND o.status NOT IN ('succeeded', 'failed', 'cancelled')
                       AND o.id = (SELECT (b.event_payload->>'operation_id')::uuid FROM outbox_events b
                                    WHERE b.workspace_id = ?0 AND b.status = 'dispatched'
                                      AND b.ordering_key = p.ordering_key AND b.key_seq < p.key_seq
                                    ORDER BY b.key_seq DESC
                                    LIMIT 1))))
     ORDER BY next_attempt_at
     LIMIT ?2
       FOR UPDATE SKIP LOCKED
), expired AS (
    SELECT id, locked_until AS due_at
      FROM outbox_events
     WHERE workspace_id = ?0 AND status = 'dispatching' AND locked_until <= ?1
     ORDER BY locked_until
     LIMIT 1
       FOR UPDATE SKIP LOCKED
), claimed AS (
    SELECT id, due_at, false AS taken_over FROM pending
    UNION ALL
    SELECT id, due_at, true FROM expired
    ORDER BY due_at
    LIMIT ?2
)
UPDATE outbox_events e
   SET status        = CASE WHEN c.taken_over AND e.attempt_count + 1 >= ?5 THEN 'dead_letter' ELSE 'dispatching' END,
       locked_by     = CASE WHEN c.taken_over AND e.attempt_count + 1 >= ?5 THEN NULL ELSE ?3 END,
       locked_until  = CASE WHEN c.taken_over AND e.attempt_count + 1 >= ?5 THEN NULL ELSE ?4::timestamptz END,
       last_error    = CASE WHEN c.taken_over THEN format(?6, e.attempt_count + 1) ELSE e.last_error END,
       wait_kind     = CASE WHEN c.taken_over THEN NULL ELSE e.wait_kind END,
       waited_for    = CASE WHEN c.taken_over THEN NULL ELSE e.waited_for END,
       failed_in     = CASE WHEN c.taken_over AND e.attempt_count + 1 >= ?5 THEN 'delivery' END,
       attempt_count = e.attempt_count + c.taken_over::int
  FROM claimed c
 WHERE e.workspace_id = ?0 AND e.status IN ('pending', 'dispatching') AND e.id = c.id
RETURNING e.id, e.workspace_id, e.event_type, e.aggregate_type, e.aggregate_id, e.event_payload,
          e.status, e.attempt_count, e.next_attempt_at, e.locked_by, e.locked_until,
          e.last_error, e.traceparent, e.created_at, e.dispatched_at,
          e.destination, e.ordering_key, e.job_attempts, e.wait_kind, e.waited_for, c.due_at, c.taken_over`

// markDispatched records that the publisher accepted the events. Fenced:
// only rows still dispatching and locked by the caller change. If our lease
// expired and another Dispatcher re-claimed an event, locked_by is theirs
// and the row is left to them (it has been, or will be, published again:
// at-least-once, consumers deduplicate by event id). The lock columns are
// cleared: they mean something only while dispatching.
//
// A worker may have run the job and parked it (deferJob) before this mark:
// the event is pending again, unlocked, with a wait_kind. It stays so (every SET keeps its value), but it
// matches and is counted: the Dispatcher's work on it is done, and a count
// short of the batch would read as a lease taken over. The test is in the
// WHERE so that it sees the row as the worker's commit left it: an UPDATE
// that waited for the worker's row lock re-checks the WHERE on the newest
// version, while a separate SELECT would read its older snapshot.
//
// The ids come as one array parameter (= ANY), so the statement text is the
// same for every batch size and OutboxClaims can keep it prepared.
const markDispatched = `
UPDATE outbox_events
   SET status        = CASE WHEN status = 'dispatching' THEN 'dispatched' ELSE status END,
       dispatched_at = CASE WHEN status = 'dispatching' THEN ?0::timestamptz ELSE dispatched_at END,
       locked_by = NULL, locked_until = NULL
 WHERE workspace_id = ?1 AND id = ANY (?2::uuid[])
   AND ((status = 'dispatching' AND locked_by = ?3)
        OR (status = 'pending' AND locked_by IS NULL AND wait_kind IS NOT NULL))`

// releaseEvent returns a failed event to pending for a later attempt: the
// caller computed next_attempt_at (backoff with jitter) and sanitized the
// error. Fenced like markDispatched, so a stale Dispatcher cannot undo a
// newer owner's claim or count an attempt twice. Every statement that
// writes a last error of its own ends the wait a worker recorded
// (wait_kind, waited_for: sql/022_job_waits.sql), so the event is not
// taken for a parked one.
const releaseEvent = `
UPDATE outbox_events
   SET status = 'pending', attempt_count = attempt_count + 1, next_attempt_at = ?,
       last_error = ?, locked_by = NULL, locked_until = NULL, wait_kind = NULL, waited_for = NULL
 WHERE workspace_id = ? AND id = ? AND status = 'dispatching' AND locked_by = ?`

// postponeEvents returns claimed events to pending without counting an
// attempt: the broker was unreachable or this Dispatcher is stopping, which
// says nothing about the events. A NULL error keeps the last one (and the
// wait a worker recorded); an error ends it, as releaseEvent says. Fenced
// like markDispatched.
const postponeEvents = `
UPDATE outbox_events
   SET status = 'pending', next_attempt_at = ?0, last_error = coalesce(?1, last_error),
       locked_by = NULL, locked_until = NULL,
       wait_kind = CASE WHEN ?1::text IS NULL THEN wait_kind END,
       waited_for = CASE WHEN ?1::text IS NULL THEN waited_for END
 WHERE workspace_id = ?2 AND id IN (?3) AND status = 'dispatching' AND locked_by = ?4`

// deadLetterEvent parks an event that failed too often, keeping the
// (sanitized) error for operators. Fenced like markDispatched.
const deadLetterEvent = `
UPDATE outbox_events
   SET status = 'dead_letter', failed_in = 'delivery', attempt_count = attempt_count + 1,
       last_error = ?, locked_by = NULL, locked_until = NULL, wait_kind = NULL, waited_for = NULL
 WHERE workspace_id = ? AND id = ? AND status = 'dispatching' AND locked_by = ?`

// redriveEvents / redriveAllEvents give dead letters a fresh start, on an
// operator's request. status = 'dead_letter' leaves every other event alone
// (an id that is pending or dispatched is not touched), and lets the
// all-of-a-workspace form use outbox_events_dead_letter_idx. last_error is
// kept until the next failure overwrites it. job_attempts starts over with
// attempt_count: a job given up on after its attempts would otherwise be
// given up on again at its first failure; and so does created_at, from
// which the worker counts the job's deadline for transient failures (a
// job given up on at its deadline would otherwise be given up on again at
// once). failed_in goes with the dead letter. Both placeholders are the
// operator's now.
const redriveEvents = `
UPDATE outbox_events
   SET status = 'pending', attempt_count = 0, job_attempts = 0, failed_in = NULL, next_attempt_at = ?, created_at = ?
 WHERE workspace_id = ? AND status = 'dead_letter' AND id IN (?)`

const redriveAllEvents = `
UPDATE outbox_events
   SET status = 'pending', attempt_count = 0, job_attempts = 0, failed_in = NULL, next_attempt_at = ?, created_at = ?
 WHERE workspace_id = ? AND status = 'dead_letter'`

// deleteDispatchedBefore removes at most a batch of one workspace's events
// delivered before the retention horizon, oldest first. Bounded so one call
// is one short transaction and little WAL at a time; SKIP LOCKED leaves
// rows another transaction holds (a concurrent cleaner) to it. The
// RetentionCleaner calls it only for what no dropped partition took: its
// horizon lies below every range partition, so the status and time
// predicates prune it to outbox_events_dispatched_default
// (sql/009_outbox_partitions.sql).
//
// By id, not by ctid: outbox_events is partitioned, a ctid names a row
// only within one partition, and the outer DELETE would remove the row of
// that ctid in every partition it visits.
const deleteDispatchedBefore = `
DELETE FROM outbox_events
 WHERE workspace_id = ?0 AND status = 'dispatched' AND dispatched_at < ?1
   AND id = ANY (ARRAY(
        SELECT id FROM outbox_events
         WHERE workspace_id = ?0 AND status = 'dispatched' AND dispatched_at < ?1
         ORDER BY dispatched_at
         LIMIT ?2
           FOR UPDATE SKIP LOCKED))`

// The discovery functions of sql/002_outbox_dispatch.sql: SECURITY DEFINER,
// callable without any workspace context by members of once_dispatcher,
// returning workspace ids or counts only.
const (
	selectDueWorkspaces        = `SELECT once_outbox_due_workspaces(?::timestamptz, ?::uuid, ?::int)`
	selectDispatchedWorkspaces = `SELECT once_outbox_dispatched_workspaces(?::timestamptz, ?::int)`
	selectOutboxStats          = `SELECT status, events, oldest_due_at FROM once_outbox_stats(?::timestamptz)`
)
