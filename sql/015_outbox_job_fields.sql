-- 015_outbox_job_fields: an event carries what the worker needs to pace,
-- order and count its job, and can be parked by the worker until later.
--
--   destination   where the job's external call goes ("shopify/shop-1",
--                 "ai/default"); the worker paces, throttles and breaks
--                 calls per destination. NULL: the job calls nothing
--                 outside.
--   ordering_key  jobs with the same key run one at a time, in commit
--                 order (a store's catalog syncs). NULL: no order.
--   job_attempts  how many of the job's runs failed by its own fault.
--                 attempt_count stays the Dispatcher's (publish attempts):
--                 a job the worker parks while its destination is down is
--                 published again later, and neither count grows for it.
--
-- Runs as the schema owner, in one transaction. ALTER TABLE on the
-- partitioned parent adds the columns to every partition
-- (sql/009_outbox_partitions.sql), the dispatched history's range
-- partitions included. It takes ACCESS EXCLUSIVE on outbox_events and its
-- partitions until the migration commits, but only for a catalog change:
-- nullable columns without a default, and a NOT NULL column with a
-- constant default (stored in the catalog, PostgreSQL 11+), rewrite no
-- row. The CHECK is NOT VALID for the same reason: every existing row
-- holds the default 0, which satisfies it, so validating it would only
-- scan the whole history under that lock; new and updated rows are checked
-- all the same.
--
-- Grants and row-level security are the table's and cover the new columns
-- (once_app has table-wide privileges); the discovery role's column grants
-- (sql/009) need none of them.
ALTER TABLE outbox_events
    ADD COLUMN destination  text,
    ADD COLUMN ordering_key text,
    ADD COLUMN job_attempts int NOT NULL DEFAULT 0,
    ADD CONSTRAINT outbox_events_job_attempts_check CHECK (job_attempts >= 0) NOT VALID;
