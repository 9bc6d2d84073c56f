-- 022_job_waits: a parked job's state lives in columns of its own.
--
-- Until now a worker that parked a job (adapters/postgres, deferJob) wrote
-- why into last_error behind a fixed prefix, and the Dispatcher's and the
-- relay's marks, the list of parked events and the wake after an outage
-- all matched that text in SQL, while the worker parsed it again out of
-- the message. Now:
--
--   wait_kind   why the worker parked it, one of model.JobWaitKinds (the
--               CHECK below lists them); NULL for an event no worker
--               parked since its last failure, give-up or withdrawal.
--               The parked test is status = 'pending' AND locked_by IS
--               NULL AND wait_kind IS NOT NULL.
--   waited_for  the destination the job waits for: its own, or its
--               platform whose breaker holds all of its accounts; NULL
--               when the wait is no destination's.
--
-- last_error keeps the reason for people only; nothing reads it back.
--
-- Locks: both columns are nullable without a default, so adding them
-- rewrites no row, and the CHECK is added NOT VALID, so it scans no row
-- either (every existing value is NULL but the backfill's, which are
-- listed kinds; new rows are checked all the same). The index is built on
-- outbox_events_live only, the queue (pending and dispatching events), not
-- the dispatched history: its build reads the queue under a SHARE lock on
-- that partition, which holds the queue's writes while it runs.
ALTER TABLE outbox_events ADD COLUMN wait_kind text, ADD COLUMN waited_for text;

ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_wait_kind_check
    CHECK (wait_kind IN ('outage', 'paced', 'busy', 'paused', 'state_unavailable',
                         'throttled', 'ordering', 'retry')) NOT VALID;

-- The backfill: the events in the queue that a worker parked under the old
-- scheme, their last_error starting 'job waits: '. This is the one place
-- that text is still read, once, to carry what the workers wrote before
-- this migration over to the columns; the prefix goes, the reason stays.
-- Only the queue partition is read (parked and in-flight events live
-- there; the dispatched history keeps its old text, which nothing reads).
-- The UPDATE reads the whole queue and holds a row lock on each parked
-- event until the migration commits: a claim skips those rows meanwhile
-- (SKIP LOCKED) and a park of one waits; on a queue of millions of parked
-- events, run the migration in a quiet moment (docs/operating.md,
-- "Migrating to 022"). The reasons were built by adapters/queue:
-- 'waiting for <destination>: <why>' for a destination's refusal,
-- 'throttled by <destination>' for a 429, 'waiting behind an earlier job
-- of its ordering key', and a failure's text for a retry.
UPDATE outbox_events_live e
   SET wait_kind = w.kind,
       waited_for = w.waited_for,
       last_error = w.reason
  FROM (SELECT id, reason,
               CASE WHEN reason LIKE 'waiting for %: %' THEN
                        CASE substring(reason FROM ': ([a-z_]+)$')
                            WHEN 'breaker_open' THEN 'outage'
                            WHEN 'probing' THEN 'outage'
                            WHEN 'paced' THEN 'paced'
                            WHEN 'busy' THEN 'busy'
                            WHEN 'paused' THEN 'paused'
                            ELSE 'state_unavailable'
                        END
                    WHEN reason LIKE 'throttled by %' THEN 'throttled'
                    WHEN reason = 'waiting behind an earlier job of its ordering key' THEN 'ordering'
                    ELSE 'retry'
               END AS kind,
               CASE WHEN reason LIKE 'waiting for %: %' THEN substring(reason FROM '^waiting for (.*): [a-z_]+$')
                    WHEN reason LIKE 'throttled by %' THEN substring(reason FROM 14)
                    WHEN reason = 'waiting behind an earlier job of its ordering key' THEN NULL
                    ELSE destination
               END AS waited_for
          FROM (SELECT id, destination, substring(last_error FROM 12) AS reason
                  FROM outbox_events_live
                 WHERE starts_with(last_error, 'job waits: ')) old) w
 WHERE e.id = w.id;

-- What the wake after an outage looks for (ports.Outbox.Wake: a
-- workspace's events parked for one kind and destination, not due yet)
-- and what the list of parked events walks (ListParked, soonest due
-- first). Partial, so the events no worker parked, most of the queue,
-- cost it nothing; the claim's statements never name wait_kind, so its
-- plan keeps to outbox_events_pending_idx.
CREATE INDEX outbox_events_parked_idx ON outbox_events_live (workspace_id, wait_kind, waited_for, next_attempt_at)
    WHERE status = 'pending' AND wait_kind IS NOT NULL;
