package postgres

// The statements of OutboxRelayMarks: how a writer settles the events it
// relayed itself. Held events are pending with locked_by = the writer's
// holder and next_attempt_at a short hold ahead (the claim of
// outbox_dispatch_sql.go takes only pending events whose next_attempt_at
// has come, so a held event is nobody else's until the hold ends, and the
// claim overwrites locked_by when it takes one).
//
// Both are fenced by status = 'pending' AND locked_by = the holder: once a
// Dispatcher claimed the event (the hold ran out first) it is dispatching
// and locked by the Dispatcher, and the relay's late mark or release
// changes nothing. Like every outbox statement they run under row-level
// security with app.workspace_id set, and name the workspace explicitly;
// the ids come as one array, so the text is the same for every batch and
// stays prepared. The rows are found by primary key.

// markRelayed records that the broker accepted the events the writer
// relayed. An event whose worker already parked it (deferJob: the hold
// cleared, a wait_kind set) is left pending and counted, for the reasons
// markDispatched gives.
const markRelayed = `
UPDATE outbox_events
   SET status        = CASE WHEN locked_by = $4 THEN 'dispatched' ELSE status END,
       dispatched_at = CASE WHEN locked_by = $4 THEN $1::timestamptz ELSE dispatched_at END,
       locked_by = NULL
 WHERE workspace_id = $2 AND id = ANY ($3::uuid[]) AND status = 'pending'
   AND (locked_by = $4 OR (locked_by IS NULL AND wait_kind IS NOT NULL))`

// releaseHeld hands held events to the Dispatchers at once, without
// counting an attempt: the relay could not publish them (the broker was
// unreachable or refused, or the writer is stopping). A NULL error keeps
// the last one; an error of its own ends any wait a worker recorded, as
// every such write does (sql/022_job_waits.sql).
const releaseHeld = `
UPDATE outbox_events
   SET next_attempt_at = $1, last_error = coalesce($5, last_error), locked_by = NULL,
       wait_kind = CASE WHEN $5 IS NULL THEN wait_kind END,
       waited_for = CASE WHEN $5 IS NULL THEN waited_for END
 WHERE workspace_id = $2 AND id = ANY ($3::uuid[]) AND status = 'pending' AND locked_by = $4`
