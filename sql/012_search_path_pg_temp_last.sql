-- 012_search_path_pg_temp_last: no function of ours reads a caller's
-- temporary table in place of the catalog or the schema's own.
--
-- A search_path that does not name pg_temp searches it first for tables
-- (never for functions or operators), before pg_catalog. Our functions
-- set search_path = pg_catalog, public, so a caller who may create
-- temporary tables could shadow pg_inherits or pg_class with tables of
-- its own: once_outbox_dispatched_ranges would then list whatever the
-- caller wrote, and once_outbox_drop_dispatched, running as the schema
-- owner, would drop the table so named (the dead letters, say). Bootstrap
-- takes TEMP from everyone, so this is hardening: with pg_temp named last
-- the catalog and the schema come first whatever a caller has made, and
-- the catalogs the functions read are named with their schema as well.
--
-- Every function that sets a search_path gets pg_temp last; the
-- partition maintenance and the stats, which read the catalog, are made
-- again with it qualified, otherwise as in 009 and 011. CREATE OR REPLACE
-- and ALTER FUNCTION keep each function's owner and grants.

CREATE OR REPLACE FUNCTION once_outbox_dispatched_ranges()
RETURNS TABLE (name text, from_at timestamptz, to_at timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public, pg_temp
SET timezone = 'UTC'
AS $$
    SELECT c.relname::text, b.m[1]::timestamptz, b.m[2]::timestamptz
      FROM pg_catalog.pg_inherits i
      JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
     CROSS JOIN LATERAL (SELECT regexp_match(pg_catalog.pg_get_expr(c.relpartbound, c.oid),
                                             $r$FROM \('([^']+)'\) TO \('([^']+)'\)$r$) AS m) b
     WHERE i.inhparent = 'public.outbox_events_dispatched'::regclass
       AND b.m IS NOT NULL
     ORDER BY 2
$$;

CREATE OR REPLACE FUNCTION once_outbox_drop_dispatched(p_before timestamptz)
RETURNS TABLE (partitions int, events bigint, rows_before timestamptz)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
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
        FOR r IN SELECT d.name, d.to_at FROM public.once_outbox_dispatched_ranges() d WHERE d.to_at <= p_before LOOP
            events := events + (SELECT greatest(c.reltuples, 0)::bigint FROM pg_catalog.pg_class c
                                 WHERE c.oid = format('public.%I', r.name)::regclass);
            EXECUTE format('DROP TABLE public.%I', r.name);
            partitions := partitions + 1;
        END LOOP;
    END IF;
    rows_before := least(p_before, (SELECT min(d.from_at) FROM public.once_outbox_dispatched_ranges() d));
    RETURN NEXT;
END
$$;

CREATE OR REPLACE FUNCTION once_outbox_stats(p_now timestamptz)
RETURNS TABLE (status text, events bigint, oldest_due_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT 'pending'::text, count(*), min(e.next_attempt_at) FILTER (WHERE e.next_attempt_at <= p_now)
      FROM public.outbox_events e WHERE e.status = 'pending'
    UNION ALL
    SELECT 'dispatching'::text, count(*), min(e.locked_until) FILTER (WHERE e.locked_until <= p_now)
      FROM public.outbox_events e WHERE e.status = 'dispatching'
    UNION ALL
    SELECT 'dispatched'::text,
           CASE WHEN history.bytes <= 64 * 1024 * 1024
                THEN (SELECT count(*) FROM public.outbox_events e WHERE e.status = 'dispatched')
                ELSE history.estimate
           END,
           NULL::timestamptz
      FROM (SELECT coalesce(sum(pg_relation_size(c.oid)), 0) AS bytes,
                   coalesce(sum(CASE WHEN c.relpages > 0 AND c.reltuples > 0
                                     THEN c.reltuples / c.relpages
                                          * (pg_relation_size(c.oid) / current_setting('block_size')::bigint)
                                END), 0)::bigint AS estimate
              FROM pg_catalog.pg_partition_tree('public.outbox_events_dispatched') t
              JOIN pg_catalog.pg_class c ON c.oid = t.relid
             WHERE t.isleaf) AS history
    UNION ALL
    SELECT 'dead_letter'::text, count(*), NULL::timestamptz
      FROM public.outbox_events e WHERE e.status = 'dead_letter'
$$;

-- The others name only tables of public, qualified, and catalog functions.
ALTER FUNCTION once_idempotency_expired_workspaces(timestamptz, int) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION once_outbox_due_workspaces(timestamptz, uuid, int) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION once_outbox_dispatched_workspaces(timestamptz, int) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION once_outbox_backlog(timestamptz, uuid, int) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION once_expired_workspaces(text, timestamptz, int) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION once_outbox_prepare_partitions(timestamptz, interval, int) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION once_outbox_dead_lettered_at() SET search_path = pg_catalog, public, pg_temp;
