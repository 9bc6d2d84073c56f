-- 009_outbox_partitions: an outbox that stays small for months (docs/operating.md,
-- "The outbox's partitions").
--
-- Runs as the schema owner, in one transaction (the migrator's). Until
-- now dispatched events stayed in outbox_events until the retention
-- cleaner deleted them row by row: 1M rows cost 12 s and 307 MB of WAL,
-- and every claim walked indexes that also held the history. Now the
-- table is partitioned by what the rows are for:
--
--   outbox_events                      PARTITION BY LIST (status)
--   ├─ outbox_events_live              pending, dispatching: the queue
--   ├─ outbox_events_dead              dead_letter: what operators look at
--   └─ outbox_events_dispatched        dispatched: history,
--      │                               PARTITION BY RANGE (dispatched_at)
--      ├─ outbox_events_dispatched_<start>   one per ONCE_OUTBOX_PARTITION_INTERVAL,
--      │                                     made ahead by the service
--      └─ outbox_events_dispatched_default   rows no range partition takes
--
-- The statements of the hot path do not change: the claim and the fences
-- name status = 'pending' / 'dispatching', so the planner prunes them to
-- outbox_events_live, whose indexes hold only the queue; the mark's UPDATE
-- to 'dispatched' moves the row into the range partition of its
-- dispatched_at (a delete from live plus an insert there). Retention
-- drops whole range partitions (once_outbox_drop_dispatched below): a
-- catalog change, no per-row WAL, no dead tuples left behind.
--
-- Locks: ALTER TABLE ... RENAME takes ACCESS EXCLUSIVE on outbox_events
-- and holds it until this migration commits, so every claim, mark and
-- business write that appends an event waits while the rows are copied
-- into the new table and its indexes are built (time it on a copy). Old
-- dispatched events are the bulk of a long-running table: before
-- migrating a large one, let the previous version's retention run (or
-- lower ONCE_OUTBOX_RETENTION for a day) to keep the pause short. Nothing
-- is lost either way: every row is copied with its status, lease and
-- attempts, in the same transaction that drops the old table.
--
-- Uniqueness of id. A unique index on a partitioned table must contain the
-- partition key, and dispatched_at is NULL until an event is dispatched,
-- so there is no primary key on the parent. Ids are UUIDs the application
-- generates (v7); what keeps them unique:
--   * outbox_events_live and outbox_events_dead have UNIQUE (id): a new
--     event (always inserted pending, into live) cannot reuse an id that
--     is queued or dead-lettered, and a redrive cannot create a second
--     live copy;
--   * a row only changes partition by an UPDATE, which moves the one row
--     (delete + insert in the same statement), so no statement of ours
--     copies an event;
--   * the dispatched range partitions are indexed on id (not unique): an
--     insert reusing the id of an event already delivered would not be
--     refused there. The ids are random 122-bit (v4) or 74-bit-random v7
--     values; nothing else inserts into this table.
-- Nothing references outbox_events by foreign key. Get by id, the lookups
-- by operation id, and the SECURITY DEFINER discovery functions of
-- 002/004/006/008 read the parent by name, so they keep working (their
-- bodies are text, resolved when called); the row-level security policies
-- and grants are made again below on the new table, as they were.

-- The old table keeps its name until the copy is done; without FORCE its
-- owner (this role) reads every row, not only those its policies allow.
ALTER TABLE outbox_events RENAME TO outbox_events_v8;
ALTER TABLE outbox_events_v8 NO FORCE ROW LEVEL SECURITY;
ALTER TABLE outbox_events_v8 DISABLE ROW LEVEL SECURITY;

CREATE TABLE outbox_events (
    id               uuid        NOT NULL,
    workspace_id     uuid        NOT NULL,
    event_type       text        NOT NULL,
    aggregate_type   text        NOT NULL,
    aggregate_id     uuid        NOT NULL,
    event_payload    jsonb       NOT NULL,
    status           text        NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'dispatching', 'dispatched', 'dead_letter')),
    attempt_count    int         NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    locked_by        text,
    locked_until     timestamptz,
    last_error       text,
    traceparent      text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    dispatched_at    timestamptz,
    dead_lettered_at timestamptz,
    CHECK (status <> 'dispatching' OR locked_until IS NOT NULL)
) PARTITION BY LIST (status);

-- The queue. Inserted, updated twice and left at a steady rate: vacuum
-- after a fixed, small number of changes (sql/001's reasoning), now on a
-- table that holds only the queue.
CREATE TABLE outbox_events_live PARTITION OF outbox_events
    FOR VALUES IN ('pending', 'dispatching')
    WITH (
        autovacuum_vacuum_scale_factor = 0,
        autovacuum_vacuum_threshold = 5000,
        autovacuum_vacuum_insert_scale_factor = 0,
        autovacuum_vacuum_insert_threshold = 5000,
        autovacuum_analyze_scale_factor = 0,
        autovacuum_analyze_threshold = 5000
    );
CREATE TABLE outbox_events_dead PARTITION OF outbox_events
    FOR VALUES IN ('dead_letter');
CREATE TABLE outbox_events_dispatched PARTITION OF outbox_events
    FOR VALUES IN ('dispatched')
    PARTITION BY RANGE (dispatched_at);
-- Rows for which no range partition exists yet (the service did not run
-- its maintenance ahead of time, or a clock far off): correct, just kept
-- and deleted row by row like before. Normally empty.
CREATE TABLE outbox_events_dispatched_default PARTITION OF outbox_events_dispatched DEFAULT;

-- once_outbox_dispatched_ranges: the range partitions of
-- outbox_events_dispatched and their bounds, read from the catalog (the
-- one truth; no bookkeeping table to drift). For the functions below and
-- for operators; not granted to anyone.
CREATE FUNCTION once_outbox_dispatched_ranges()
RETURNS TABLE (name text, from_at timestamptz, to_at timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public
SET timezone = 'UTC'
AS $$
    SELECT c.relname::text, b.m[1]::timestamptz, b.m[2]::timestamptz
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
     CROSS JOIN LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid),
                                             $r$FROM \('([^']+)'\) TO \('([^']+)'\)$r$) AS m) b
     WHERE i.inhparent = 'public.outbox_events_dispatched'::regclass
       AND b.m IS NOT NULL
     ORDER BY 2
$$;
REVOKE ALL ON FUNCTION once_outbox_dispatched_ranges() FROM PUBLIC;

-- once_outbox_prepare_partitions: make the range partitions for
-- dispatched events, p_width wide, aligned on multiples of p_width from
-- 2000-01-01 UTC, for the slot holding p_from and the p_ahead slots after
-- it. Returns how many it made. Called by every process that runs a
-- Dispatcher, at start and at each cleanup interval, and by this
-- migration for the days that already hold dispatched events.
--
-- SECURITY DEFINER, owned by the schema owner: creating a partition is
-- DDL, which the application role must not be able to do. This function
-- is the narrow door: it only adds partitions of outbox_events_dispatched,
-- named by its own format from a timestamp, never a caller's text.
--   * A slot that overlaps an existing partition is skipped, and a changed
--     width takes effect at the first free slot. Processes running at once
--     make each partition once: an advisory lock lets one in at a time,
--     and the others return at once (it is doing their work) instead of
--     waiting behind it into their lock_timeout.
--   * If the default partition already holds rows of a slot, PostgreSQL
--     refuses the partition (check_violation); the slot is skipped and
--     its rows stay in the default partition, whose expired rows the
--     cleaner deletes in batches. Correct, only slower; it happens when
--     marks ran before any maintenance (a fresh database, the first
--     seconds after start).
--   * lock_timeout: creating a partition takes ACCESS EXCLUSIVE on
--     outbox_events_dispatched for a moment. If a long transaction holds a
--     lock on it, waiting would queue every mark behind us; give up
--     quickly instead, the next round tries again (ahead slots leave
--     time for that).
CREATE FUNCTION once_outbox_prepare_partitions(p_from timestamptz, p_width interval, p_ahead int)
RETURNS int
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public
SET timezone = 'UTC'
SET lock_timeout = '200ms'
AS $$
DECLARE
    first   timestamptz;
    slot    timestamptz;
    made    int := 0;
BEGIN
    IF p_width IS NULL OR p_width < interval '1 minute' OR p_width > interval '31 days'
       OR p_ahead IS NULL OR p_ahead < 0 OR p_ahead > 1000 THEN
        RAISE EXCEPTION 'once_outbox_prepare_partitions: width % (1 minute to 31 days) or ahead % (0 to 1000) out of range',
            p_width, p_ahead;
    END IF;
    -- Another process maintaining the partitions right now does the same
    -- work: leave it to it rather than wait (and time out) behind it.
    IF NOT pg_try_advisory_xact_lock(hashtext('once_outbox_partitions')) THEN
        RETURN 0;
    END IF;
    first := date_bin(p_width, p_from, timestamptz '2000-01-01 00:00:00+00');
    FOR i IN 0..p_ahead LOOP
        slot := first + p_width * i;
        CONTINUE WHEN EXISTS (SELECT 1 FROM once_outbox_dispatched_ranges() r
                               WHERE r.from_at < slot + p_width AND r.to_at > slot);
        BEGIN
            EXECUTE format('CREATE TABLE public.%I PARTITION OF public.outbox_events_dispatched FOR VALUES FROM (%L) TO (%L)',
                           'outbox_events_dispatched_' || to_char(slot, 'YYYYMMDD"t"HH24MI'), slot, slot + p_width);
            made := made + 1;
        EXCEPTION WHEN check_violation THEN
            NULL;
        END;
    END LOOP;
    RETURN made;
END
$$;

-- once_outbox_drop_dispatched: retention of dispatched events. Drops every
-- range partition whose upper bound is at or before p_before (all its
-- events were dispatched before the horizon) and says how many partitions
-- and, from the planner's statistics, about how many events went. DROP
-- TABLE of a partition writes a few kB of WAL whatever it holds (1M
-- events: see docs/benchmarks.md), and leaves no dead tuple.
--
-- rows_before is the horizon for the cleaner's row-by-row DELETE, which
-- is left with the events no range partition holds: those in the default
-- partition. It is p_before, lowered to the start of the oldest range
-- partition still there: below that start only the default partition
-- holds rows, so the DELETE (whose predicate prunes to partitions that can
-- hold dispatched_at < rows_before) never touches a range partition, and
-- the events of a partition that straddles the horizon wait for their
-- partition to go (at most one partition width past retention).
--
-- SECURITY DEFINER owned by the schema owner, like the function above; it
-- drops only partitions of outbox_events_dispatched that the catalog says
-- are wholly older than p_before, and the same lock_timeout applies (a
-- transaction left open on the table delays retention, never the marks).
CREATE FUNCTION once_outbox_drop_dispatched(p_before timestamptz)
RETURNS TABLE (partitions int, events bigint, rows_before timestamptz)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public
SET timezone = 'UTC'
SET lock_timeout = '200ms'
AS $$
DECLARE
    r record;
BEGIN
    partitions := 0;
    events := 0;
    -- As in once_outbox_prepare_partitions: one process at a time, the
    -- others skip the drop this round.
    IF pg_try_advisory_xact_lock(hashtext('once_outbox_partitions')) THEN
        FOR r IN SELECT d.name, d.to_at FROM once_outbox_dispatched_ranges() d WHERE d.to_at <= p_before LOOP
            events := events + (SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c
                                 WHERE c.oid = format('public.%I', r.name)::regclass);
            EXECUTE format('DROP TABLE public.%I', r.name);
            partitions := partitions + 1;
        END LOOP;
    END IF;
    rows_before := least(p_before, (SELECT min(d.from_at) FROM once_outbox_dispatched_ranges() d));
    RETURN NEXT;
END
$$;

-- The cleanup runs as the application role (its Dispatcher's process).
REVOKE ALL ON FUNCTION once_outbox_prepare_partitions(timestamptz, interval, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION once_outbox_drop_dispatched(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_outbox_prepare_partitions(timestamptz, interval, int) TO once_dispatcher;
GRANT EXECUTE ON FUNCTION once_outbox_drop_dispatched(timestamptz) TO once_dispatcher;

-- Daily partitions for the dispatched events already there, so they leave
-- by partition at retention too (the oldest 60 days at most; anything
-- older stays in the default partition and goes row by row). Nothing for
-- a database without dispatched events: the service makes its partitions
-- of its own width when it starts.
SELECT once_outbox_prepare_partitions(f.from_at, interval '1 day',
                                      ceil(extract(epoch FROM d.last_at - f.from_at) / 86400)::int)
  FROM (SELECT min(dispatched_at) AS first_at, max(dispatched_at) AS last_at
          FROM outbox_events_v8 WHERE status = 'dispatched') d
 CROSS JOIN LATERAL (SELECT greatest(d.first_at, d.last_at - interval '59 days') AS from_at) f
 WHERE d.first_at IS NOT NULL;

-- Every row, as it was. A dispatched row without dispatched_at (none
-- should exist: every path that dispatches sets it) lands in the default
-- partition.
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, locked_by, locked_until, last_error, traceparent,
                           created_at, dispatched_at, dead_lettered_at)
SELECT id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
       attempt_count, next_attempt_at, locked_by, locked_until, last_error, traceparent,
       created_at, dispatched_at, dead_lettered_at
  FROM outbox_events_v8;

DROP TABLE outbox_events_v8;

-- Indexes, built after the copy. Each status keeps the indexes of 001,
-- 002 and 008 on the partition that holds it, with their names: the
-- claim's and the discovery's partial indexes now hold only the queue,
-- however long the history grows.
CREATE UNIQUE INDEX outbox_events_live_id_key ON outbox_events_live (id);
CREATE INDEX outbox_events_pending_idx ON outbox_events_live (workspace_id, next_attempt_at)
    WHERE status = 'pending';
CREATE INDEX outbox_events_dispatching_idx ON outbox_events_live (workspace_id, locked_until)
    WHERE status = 'dispatching';
CREATE UNIQUE INDEX outbox_events_dead_id_key ON outbox_events_dead (id);
CREATE INDEX outbox_events_dead_letter_idx ON outbox_events_dead (workspace_id, created_at);
CREATE INDEX outbox_events_dead_lettered_idx ON outbox_events_dead (workspace_id, dead_lettered_at);
-- Dispatched events are read by id (Get) and by operation (below) only;
-- the range partitions get this index when they are created.
CREATE INDEX outbox_events_dispatched_id_idx ON outbox_events_dispatched (id);
-- What the row-by-row retention of the default partition walks.
CREATE INDEX outbox_events_dispatched_default_at_idx ON outbox_events_dispatched_default (workspace_id, dispatched_at);
-- 005: an operation finds its job's event, whatever its status.
CREATE INDEX outbox_events_operation_idx ON outbox_events (workspace_id, (event_payload->>'operation_id'));

-- 008's trigger, on the new table (a BEFORE ROW trigger on a partitioned
-- table is cloned to every partition, present and future).
CREATE TRIGGER outbox_events_dead_lettered_at
    BEFORE UPDATE OF status ON outbox_events
    FOR EACH ROW
    WHEN (NEW.status IS DISTINCT FROM OLD.status
          AND (NEW.status = 'dead_letter' OR OLD.status = 'dead_letter'))
    EXECUTE FUNCTION once_outbox_dead_lettered_at();

-- Row-level security and grants as in 001, 004 and 008, on the parent:
-- every query goes through it, and its policies apply to the rows of all
-- partitions. The partitions themselves are granted to no one, so no role
-- but the owner can reach a partition around the parent's policies.
ALTER TABLE outbox_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON outbox_events
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));
CREATE POLICY discovery_schedule ON outbox_events
    AS PERMISSIVE FOR SELECT TO once_discovery
    USING (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_events TO once_app;
GRANT SELECT (workspace_id, status, next_attempt_at, locked_until, dispatched_at, dead_lettered_at)
    ON outbox_events TO once_discovery;

-- 002's discovery for the retention cleaner, now for what is left to it:
-- dispatched events before p_before that no dropped partition took. With
-- the horizon in the walk too, the planner prunes it to the partitions
-- that can hold such rows (the default one, normally empty), instead of
-- walking every day of history workspace by workspace.
CREATE OR REPLACE FUNCTION once_outbox_dispatched_workspaces(p_before timestamptz, p_limit int)
RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
    WITH RECURSIVE ws(workspace_id) AS (
        (SELECT e.workspace_id FROM public.outbox_events e
          WHERE e.status = 'dispatched' AND e.dispatched_at < p_before
          ORDER BY e.workspace_id LIMIT 1)
        UNION ALL
        SELECT (SELECT e.workspace_id FROM public.outbox_events e
                 WHERE e.status = 'dispatched' AND e.dispatched_at < p_before
                   AND e.workspace_id > w.workspace_id
                 ORDER BY e.workspace_id LIMIT 1)
          FROM ws w
         WHERE w.workspace_id IS NOT NULL
    )
    SELECT ws.workspace_id
      FROM ws
     WHERE ws.workspace_id IS NOT NULL
     LIMIT greatest(p_limit, 0)
$$;
