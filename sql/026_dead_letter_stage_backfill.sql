-- 026_dead_letter_stage_backfill: the dead letters written before 025 get
-- their stage (failed_in, sql/025_dead_letter_stage.sql) and, for a job's,
-- its attempts.
--
-- This is the one place the old text is still read, once, to carry what
-- the workers wrote before 025 over to the columns: a worker that gave up
-- on a job wrote 'job failed: ' and, when it counted them, 'after <n>
-- attempt(s): ' first (model.JobFailure); any other dead letter was the
-- Dispatcher's. last_error stays as it is, for people.
--
-- Only the dead letters' partition is read (sql/009: every dead letter
-- lives in outbox_events_dead; the queue and the dispatched history have
-- no stage). The UPDATE holds a row lock on each dead letter until the
-- migration commits: a redrive or a withdrawal of one waits meanwhile;
-- the claim, the relay and the workers' parks never touch dead letters.
UPDATE outbox_events_dead
   SET failed_in = CASE WHEN starts_with(last_error, 'job failed: ') THEN 'job' ELSE 'delivery' END,
       job_attempts = coalesce(substring(last_error FROM '^job failed: after ([0-9]{1,9}) attempts?: ')::int, job_attempts)
 WHERE failed_in IS NULL;
