-- 021_ordering_in_the_outbox: ordering keys hold across processes,
-- restarts and redeliveries, enforced where the order is known.
--
-- Until now jobs of one ordering key were kept apart and in order in the
-- memory of one `once work`; two workers, or one restarted, could run a
-- key's jobs at once or out of order. Now the outbox decides: an event of
-- key K is claimed by a Dispatcher only once every earlier event of K has
-- ended (adapters/postgres/outbox_dispatch_sql.go, claimDueEvents).
--
-- "Earlier" must mean commit order, and ids, created_at or a plain
-- sequence give only the order in which transactions *started* writing:
-- T1 may draw sequence value 1, T2 value 2, and T2 commit first; a
-- Dispatcher would then see 2 with no 1 before it and hand it out. So
-- Append takes a transaction-scoped advisory lock on (workspace, key)
-- before it draws key_seq from outbox_events_key_seq and inserts
-- (adapters/postgres/outbox.go). The lock is held until the transaction
-- ends, so of two transactions appending to one key the second draws its
-- value only after the first has committed (or rolled back): within a
-- key, key_seq order is commit order, and a reader that sees an event of
-- K sees every committed event of K with a smaller key_seq. A rolled-back
-- transaction leaves a gap, which orders nothing and blocks nothing.
--
--   key_seq  the event's place in its key's commit order; NULL without an
--            ordering key, and for events appended before this migration
--            (those are ordered as before, by the worker alone).
--
-- outbox_events_key_idx serves the claim's test "is an earlier event of K
-- not ended?": workspace_id first (every outbox statement names it, see
-- outbox_dispatch_sql.go), then the key and its order, partial so that
-- events without a key (most of them) cost it nothing. Created on the
-- partitioned parent, it is made on every partition, the range partitions
-- of the dispatched history included, and on those made later.
--
-- Runs as the schema owner, in one transaction: a nullable column without
-- a default rewrites no row. The index starts empty (every existing
-- key_seq is NULL), but its build still reads every row of every
-- partition, the dispatched history included, under a SHARE lock that
-- holds the outbox's writes (the API's appends, claims, marks and parks)
-- for as long as that read takes: on a history of millions of rows, run
-- the migration in a quiet moment (docs/operating.md, "Migrating to 021").
CREATE SEQUENCE outbox_events_key_seq AS bigint;
GRANT USAGE ON SEQUENCE outbox_events_key_seq TO once_app;

ALTER TABLE outbox_events ADD COLUMN key_seq bigint;

CREATE INDEX outbox_events_key_idx ON outbox_events (workspace_id, ordering_key, key_seq)
    WHERE key_seq IS NOT NULL;
