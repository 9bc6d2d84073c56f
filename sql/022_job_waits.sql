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
-- Locks: ALTER TABLE holds an ACCESS EXCLUSIVE lock on the outbox, its
-- reads included, until this migration commits, so this one does nothing
-- else and takes milliseconds: both columns are nullable without a
-- default, so adding them rewrites no row, and the CHECK is added NOT
-- VALID, so it scans no row either (every existing value is NULL; the
-- backfill of 023 writes listed kinds only, and new rows are checked all
-- the same). The backfill of the jobs parked before and the index come in
-- 023_job_waits_backfill.sql, a transaction of its own that takes row
-- locks on the parked events and, for its index build, a SHARE lock on
-- the queue's partition only.
ALTER TABLE outbox_events ADD COLUMN wait_kind text, ADD COLUMN waited_for text;

ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_wait_kind_check
    CHECK (wait_kind IN ('outage', 'paced', 'busy', 'paused', 'state_unavailable',
                         'throttled', 'ordering', 'retry')) NOT VALID;
