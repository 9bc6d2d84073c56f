package postgres

// deadLetterJob parks the event of a job a worker gave up on. Unlike
// deadLetterEvent it is not fenced by a Dispatcher's lease: the event has
// usually been marked dispatched already, and if the Dispatcher has not
// marked it yet, its fenced markDispatched (status = 'dispatching') then
// leaves the dead letter alone. The row lock this UPDATE takes makes a
// concurrent claim or mark wait for the worker's transaction. attempt_count
// is kept: it counts delivery attempts, and the worker's own retries are
// not deliveries; those are job_attempts, and failed_in says the job gave
// up (sql/024_dead_letter_stage.sql), so nothing reads either out of
// last_error.
//
// Parameters: job_attempts, last_error, the workspace, the event's id.
const deadLetterJob = `
UPDATE outbox_events
   SET status = 'dead_letter', failed_in = 'job', job_attempts = ?, last_error = ?,
       locked_by = NULL, locked_until = NULL, wait_kind = NULL, waited_for = NULL
 WHERE workspace_id = ? AND id = ?`

// deferJob parks the event of a job a worker must hold back (its
// destination's breaker open or pace spent, a backoff): pending again,
// due at until, with the job's own attempts and its wait (wait_kind,
// waited_for; last_error the reason for people). It takes an event in
// flight: dispatched, dispatching (the worker was quicker than the
// Dispatcher's mark) or pending and held by a writer's relay (quicker than
// the relay's mark; held events are the only pending ones with a
// locked_by). A pending event that is not held is already waiting, and a
// dead letter is an operator's: both are left alone.
//
// So is the event of a job that ended: its operation (the one its payload
// names, outbox_events_operation_idx's expression) succeeded, failed or
// was cancelled, a cancel's withdrawn event included (dispatched, like a
// delivered one). A late duplicate of its message (a broker's redelivery
// after a worker was killed) that its destination's gate turned away
// would otherwise make it pending again: delivered once more, and shown
// as waiting on an operation that is over. The operation's row is read
// FOR SHARE: a job's end, a cancel and a give-up all update that row
// before they touch the event, so a park that meets one of them in flight
// waits for its commit and then sees the operation ended, and one of them
// that comes second finds the event parked, as a park before its end
// leaves it (the next delivery finds the operation finished). An event
// whose payload names no operation (a webhook delivery) has nothing to
// end it here and is parked as in flight.
//
// A dispatched event moves from its dispatched partition back to
// outbox_events_live (sql/009_outbox_partitions.sql): dispatched_at is
// cleared with it. The lock is cleared too, so the Dispatcher's or relay's
// fenced mark that may still come changes nothing (it recognises the
// parked event by its wait_kind: markDispatched). attempt_count is reset:
// it counts the Dispatcher's publish attempts, and a job parked for an
// hour-long outage is published again many times without any of them
// failing.
//
// Parameters: next_attempt_at, job_attempts, last_error, the workspace,
// the event's id, wait_kind, waited_for.
const deferJob = `
WITH job AS (
    SELECT o.status
      FROM operations o
     WHERE o.workspace_id = ?3
       AND o.id = (SELECT (e.event_payload->>'operation_id')::uuid
                     FROM outbox_events e
                    WHERE e.workspace_id = ?3 AND e.id = ?4)
       FOR SHARE
)
UPDATE outbox_events
   SET status = 'pending', next_attempt_at = ?0, job_attempts = ?1, last_error = ?2,
       wait_kind = ?5, waited_for = ?6,
       locked_by = NULL, locked_until = NULL, dispatched_at = NULL, attempt_count = 0
 WHERE workspace_id = ?3 AND id = ?4
   AND (status IN ('dispatching', 'dispatched') OR (status = 'pending' AND locked_by IS NOT NULL))
   AND NOT EXISTS (SELECT 1 FROM job WHERE job.status IN ('succeeded', 'failed', 'cancelled'))`

// withdrawJob retires the event of a cancelled job that is not in flight:
// waiting (pending, held by no relay) or parked for an operator. It moves
// to the dispatched history (a partition of its own, sql/009), where
// retention deletes it as any delivered event. An event in flight is left
// to its job, which finds the operation cancelled; the row lock this
// UPDATE takes makes a concurrent claim wait and then skip the row, whose
// status no longer matches.
const withdrawJob = `
UPDATE outbox_events
   SET status = 'dispatched', dispatched_at = ?, last_error = ?, locked_by = NULL, locked_until = NULL,
       wait_kind = NULL, waited_for = NULL, failed_in = NULL
 WHERE workspace_id = ? AND id = ?
   AND ((status = 'pending' AND locked_by IS NULL) OR status = 'dead_letter')`

// outboxEventColumns are the columns an outboxRow reads.
const outboxEventColumns = `id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload,
       status, attempt_count, next_attempt_at, locked_by, locked_until,
       last_error, traceparent, created_at, dispatched_at,
       destination, ordering_key, job_attempts, wait_kind, waited_for, failed_in`

// selectEventsForOperations finds the events that deliver the jobs of
// some operations: every job payload names its operation (operation_id),
// indexed by outbox_events_operation_idx (sql/004_job_failures.sql). The
// caller keeps only the events whose aggregate is the operation's resource.
const selectEventsForOperations = `
SELECT ` + outboxEventColumns + `
  FROM outbox_events
 WHERE workspace_id = ? AND (event_payload->>'operation_id') IN (?)`

// selectParkedEvents lists the events of a workspace whose jobs a worker
// parked (deferJob) and that nobody has taken up since: the same test as
// markDispatched's for a parked event (model.OutboxEvent.ParkedByWorker),
// soonest due first. Pending events live in outbox_events_live; the
// parked ones are in outbox_events_parked_idx (sql/023_job_waits_backfill.sql).
const selectParkedEvents = `
SELECT ` + outboxEventColumns + `
  FROM outbox_events
 WHERE workspace_id = ? AND status = 'pending' AND locked_by IS NULL AND wait_kind IS NOT NULL
 ORDER BY next_attempt_at, id
 LIMIT ?`

// wakeParked brings forward the events of a workspace that a worker parked
// long for one kind and destination (deferJob's wait_kind and waited_for,
// outbox_events_parked_idx, sql/023) and that still sleep beyond the
// spread (due after ?0 + ?5 microseconds): what they waited for, a
// destination that was down, answers again. They become due from ?0, in
// the order they were due, so the Dispatcher publishes an ordering key's
// jobs in their order (it claims by next_attempt_at), spaced ?5 divided by
// how many it moves, at most ?1 microseconds apart: the spread is decided
// by the rows moved, every worker's, not by the waking worker's share,
// so a fleet's wake ends within ?5 however many workers parked them. An
// event already due within the spread (an earlier Wake brought it
// forward) is left as it is, here and when a concurrent Wake moved it
// first (the outer condition is checked again on the row it waited for),
// so a Wake repeated while the woken come back moves only what was
// parked since. Only a pending event nobody holds is moved: one the
// Dispatcher claims meanwhile is its.
const wakeParked = `
UPDATE outbox_events e
   SET next_attempt_at = w.due
  FROM (SELECT id, ?0::timestamptz + (row_number() OVER (ORDER BY next_attempt_at, id) - 1)
                 * greatest(least(?1::bigint, ?5::bigint / count(*) OVER ()), 1) * interval '1 microsecond' AS due
          FROM outbox_events
         WHERE workspace_id = ?2 AND status = 'pending' AND locked_by IS NULL
           AND wait_kind = ?3 AND waited_for = ?4 AND next_attempt_at > ?0::timestamptz + ?5::bigint * interval '1 microsecond') w
 WHERE e.workspace_id = ?2 AND e.id = w.id
   AND e.status = 'pending' AND e.locked_by IS NULL AND e.wait_kind = ?3 AND e.waited_for = ?4
   AND e.next_attempt_at > ?0::timestamptz + ?5::bigint * interval '1 microsecond'`
