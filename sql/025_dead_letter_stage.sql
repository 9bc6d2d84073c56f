-- 025_dead_letter_stage: where a dead letter gave up lives in a column of
-- its own, and a job's attempts in job_attempts.
--
-- Until now a worker that gave up on a job (adapters/postgres,
-- deadLetterJob) wrote its attempts into last_error behind a fixed prefix,
-- and the console and the API read the stage and the attempts back out of
-- that text: a broker's error that happened to read the same was taken for
-- a job's. Now:
--
--   failed_in     for a dead letter, where it gave up: 'delivery' (the
--                 Dispatcher could not publish it: deadLetterEvent, or a
--                 claim that took over an expired lease once too often)
--                 or 'job' (the worker gave up on its job: deadLetterJob).
--                 NULL for every other status; a redrive or a withdrawal
--                 clears it.
--   job_attempts  (sql/015) the worker's runs of the job: deadLetterJob
--                 now writes the count it gave up after.
--
-- last_error keeps the text for people only; nothing reads it back.
--
-- Locks: as 022, this ALTER TABLE holds an ACCESS EXCLUSIVE lock on the
-- outbox until it commits, so it does nothing else and takes
-- milliseconds: the column is nullable without a default (no row is
-- rewritten) and its CHECK is NOT VALID (no row is scanned; every
-- existing value is NULL, the backfill of 026 writes listed values only).
-- The backfill of the dead letters written before comes in
-- 026_dead_letter_stage_backfill.sql, a transaction of its own.
ALTER TABLE outbox_events ADD COLUMN failed_in text;

ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_failed_in_check
    CHECK (failed_in IN ('delivery', 'job')) NOT VALID;
