package postgres

// deadLetterJob parks the event of a job a worker gave up on. Unlike
// deadLetterEvent it is not fenced by a Dispatcher's lease: the event has
// usually been marked dispatched already, and if the Dispatcher has not
// marked it yet, its fenced markDispatched (status = 'dispatching') then
// leaves the dead letter alone. The row lock this UPDATE takes makes a
// concurrent claim or mark wait for the worker's transaction. attempt_count
// is kept: it counts delivery attempts, and the worker's own retries are
// not deliveries.
const deadLetterJob = `
UPDATE outbox_events
   SET status = 'dead_letter', last_error = ?, locked_by = NULL, locked_until = NULL
 WHERE workspace_id = ? AND id = ?`

// selectEventsForOperations finds the events that deliver the jobs of
// some operations: every job payload names its operation (operation_id),
// indexed by outbox_events_operation_idx (sql/004_job_failures.sql). The
// caller keeps only the events whose aggregate is the operation's resource.
const selectEventsForOperations = `
SELECT id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload,
       status, attempt_count, next_attempt_at, locked_by, locked_until,
       last_error, traceparent, created_at, dispatched_at,
       destination, ordering_key, job_attempts
  FROM outbox_events
 WHERE workspace_id = ? AND (event_payload->>'operation_id') IN (?)`
