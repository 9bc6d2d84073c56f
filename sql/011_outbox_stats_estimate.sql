-- 011_outbox_stats_estimate: the outbox's counts cost the same at any size
-- of the dispatched history.
--
-- once_outbox_stats (002) counted every status exactly, the dispatched
-- events included: a pass over the history's index on every metrics scrape
-- of every process. With months of retention that is millions of entries a
-- scrape, the slow count River's users report at 5M+ rows, and past the
-- scrape's 3 s timeout the whole gauge is missing, the dead-letter count
-- that operators alert on with it.
--
-- The queue (pending, dispatching) and the dead letters stay exact: they
-- are small when things are well, and their size is the signal. The
-- dispatched history is counted exactly while its partitions hold at most
-- 64 MB of rows (about 300,000 events), and beyond that it is the
-- planner's own estimate: per partition, the tuple density VACUUM and
-- ANALYZE last saw (pg_class.reltuples / relpages) times its size now.
-- A partition not yet vacuumed or analyzed counts 0 until autovacuum
-- reaches it (the insert threshold brings it there).
CREATE OR REPLACE FUNCTION once_outbox_stats(p_now timestamptz)
RETURNS TABLE (status text, events bigint, oldest_due_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
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
              FROM pg_partition_tree('public.outbox_events_dispatched') t
              JOIN pg_class c ON c.oid = t.relid
             WHERE t.isleaf) AS history
    UNION ALL
    SELECT 'dead_letter'::text, count(*), NULL::timestamptz
      FROM public.outbox_events e WHERE e.status = 'dead_letter'
$$;
