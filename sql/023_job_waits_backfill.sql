-- 023_job_waits_backfill: the jobs parked before 022 get their wait's
-- columns (wait_kind, waited_for: sql/022_job_waits.sql), and the parked
-- events an index.
--
-- The backfill: the events in the queue that a worker parked under the old
-- scheme, their last_error starting 'job waits: '. This is the one place
-- that text is still read, once, to carry what the workers wrote before
-- this migration over to the columns; the prefix goes, the reason stays.
-- Only the queue partition is read (parked and in-flight events live
-- there; the dispatched history keeps its old text, which nothing reads).
-- The UPDATE reads the whole queue and holds a row lock on each parked
-- event until the migration commits: a claim skips those rows meanwhile
-- (SKIP LOCKED) and a park of one waits. On a queue of many parked
-- events it takes a while (200,000 among 1,000,000 queued: a minute on a
-- loaded 2-core test machine): run it in a quiet moment
-- (docs/operating.md, "Migrating to 022 and 023"). The reasons were built by adapters/queue:
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
-- plan keeps to outbox_events_pending_idx. Built on the queue's partition
-- only (pending and dispatching events), not the dispatched history: the
-- build reads the queue under a SHARE lock on that partition, which holds
-- the queue's writes while it runs (5 s for 1,000,000 queued events on
-- the same loaded machine).
CREATE INDEX outbox_events_parked_idx ON outbox_events_live (workspace_id, wait_kind, waited_for, next_attempt_at)
    WHERE status = 'pending' AND wait_kind IS NOT NULL;
