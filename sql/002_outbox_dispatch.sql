-- 002_outbox_dispatch: what the Dispatcher needs beyond 001.
--
-- Runs as the schema owner. The group role once_dispatcher must exist
-- already: postgres.Bootstrap creates it (NOLOGIN, NOBYPASSRLS) and, by
-- default, grants it to the application login role, because `once serve`
-- can run the Dispatcher in-process. Re-run Bootstrap before migrating a
-- database bootstrapped by an older version.
--
-- The Dispatcher itself needs no new table privilege: it claims, marks and
-- deletes events as the application role, workspace by workspace, with
-- app.workspace_id set, under the row-level security policy of 001. What it
-- cannot do under RLS is find the workspaces to visit; the three functions
-- below are the narrow door for that: SECURITY DEFINER, owned by
-- once_discovery (BYPASSRLS, NOLOGIN), returning workspace ids or counts,
-- never rows, EXECUTE for once_dispatcher only.
--
-- Every predicate on outbox_events here, and in the adapter's claim, is a
-- plain built-in operator on a column (=, <=, <, >): a non-leakproof function
-- in a predicate would keep the planner from pushing it below the RLS policy
-- and so from using the indexes.

-- Dead letters of a workspace, oldest first: what operators list, and what
-- Redrive (all of a workspace's) and the stats walk. Without it both would
-- scan the whole table for a status that is normally rare.
CREATE INDEX outbox_events_dead_letter_idx ON outbox_events (workspace_id, created_at)
    WHERE status = 'dead_letter';

-- The claim uses the two partial indexes of 001 as they are, each for its
-- branch: outbox_events_pending_idx (workspace_id, next_attempt_at) WHERE
-- status = 'pending' for due events, outbox_events_dispatching_idx
-- (workspace_id, locked_until) WHERE status = 'dispatching' for expired
-- leases. The claim is a UNION ALL of the two (see the adapter's
-- outbox_dispatch_sql.go), because one OR over both statuses can use
-- neither index in order.

GRANT SELECT ON outbox_events TO once_discovery;

-- once_outbox_due_workspaces: which workspaces with an id greater than
-- p_after have work for the Dispatcher at p_now (pending and due, or
-- dispatching with an expired lease), up to p_limit of them, in workspace id
-- order. p_after is the Dispatcher's cursor: it walks all due workspaces
-- round-robin, p_limit at a time, and wraps around.
--
-- A skip scan, once per partial index. PostgreSQL 15 has no index skip scan,
-- so the recursive CTE emulates it: each step is one index probe for "the
-- smallest workspace_id greater than the last one" in the partial index
-- (ORDER BY workspace_id LIMIT 1 reads one index entry), so the walk visits
-- each distinct workspace with pending events once, never their rows. Each
-- visited workspace is kept if a second probe finds a due row: the index is
-- (workspace_id, next_attempt_at), so the workspace's first entry is its
-- oldest, and one probe answers. Cost: two probes per workspace visited,
-- whatever the number of rows; LIMIT stops the walk as soon as enough
-- workspaces are found (the recursive CTE is evaluated on demand). The
-- expired-lease walk is the same over outbox_events_dispatching_idx and is
-- normally short: few events are in flight at once.
--
-- Fairness: the cursor, not the id order, decides who is served next, so
-- with more than p_limit workspaces due the high ids are not starved by busy
-- low ones.
CREATE FUNCTION once_outbox_due_workspaces(p_now timestamptz, p_after uuid, p_limit int)
RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
    WITH RECURSIVE pending_ws(workspace_id) AS (
        (SELECT e.workspace_id FROM public.outbox_events e
          WHERE e.status = 'pending' AND e.workspace_id > p_after
          ORDER BY e.workspace_id LIMIT 1)
        UNION ALL
        SELECT (SELECT e.workspace_id FROM public.outbox_events e
                 WHERE e.status = 'pending' AND e.workspace_id > w.workspace_id
                 ORDER BY e.workspace_id LIMIT 1)
          FROM pending_ws w
         WHERE w.workspace_id IS NOT NULL
    ),
    leased_ws(workspace_id) AS (
        (SELECT e.workspace_id FROM public.outbox_events e
          WHERE e.status = 'dispatching' AND e.workspace_id > p_after
          ORDER BY e.workspace_id LIMIT 1)
        UNION ALL
        SELECT (SELECT e.workspace_id FROM public.outbox_events e
                 WHERE e.status = 'dispatching' AND e.workspace_id > w.workspace_id
                 ORDER BY e.workspace_id LIMIT 1)
          FROM leased_ws w
         WHERE w.workspace_id IS NOT NULL
    ),
    due AS (
        (SELECT w.workspace_id FROM pending_ws w
          WHERE w.workspace_id IS NOT NULL
            AND EXISTS (SELECT 1 FROM public.outbox_events e
                         WHERE e.status = 'pending' AND e.workspace_id = w.workspace_id
                           AND e.next_attempt_at <= p_now)
          LIMIT greatest(p_limit, 0))
        UNION
        (SELECT w.workspace_id FROM leased_ws w
          WHERE w.workspace_id IS NOT NULL
            AND EXISTS (SELECT 1 FROM public.outbox_events e
                         WHERE e.status = 'dispatching' AND e.workspace_id = w.workspace_id
                           AND e.locked_until <= p_now)
          LIMIT greatest(p_limit, 0))
    )
    SELECT due.workspace_id FROM due
     ORDER BY due.workspace_id
     LIMIT greatest(p_limit, 0)
$$;

-- once_outbox_dispatched_workspaces: which workspaces hold events dispatched
-- before p_before (for the retention cleaner, which then deletes them in
-- bounded batches under RLS). The same skip scan, over
-- outbox_events_dispatched_idx (workspace_id, dispatched_at).
CREATE FUNCTION once_outbox_dispatched_workspaces(p_before timestamptz, p_limit int)
RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
    WITH RECURSIVE ws(workspace_id) AS (
        (SELECT e.workspace_id FROM public.outbox_events e
          WHERE e.status = 'dispatched'
          ORDER BY e.workspace_id LIMIT 1)
        UNION ALL
        SELECT (SELECT e.workspace_id FROM public.outbox_events e
                 WHERE e.status = 'dispatched' AND e.workspace_id > w.workspace_id
                 ORDER BY e.workspace_id LIMIT 1)
          FROM ws w
         WHERE w.workspace_id IS NOT NULL
    )
    SELECT ws.workspace_id
      FROM ws
     WHERE ws.workspace_id IS NOT NULL
       AND EXISTS (SELECT 1 FROM public.outbox_events e
                    WHERE e.status = 'dispatched' AND e.workspace_id = ws.workspace_id
                      AND e.dispatched_at < p_before)
     LIMIT greatest(p_limit, 0)
$$;

-- once_outbox_stats: per status, how many events there are over all
-- workspaces and, for the statuses the Dispatcher works on, since when the
-- oldest due one has been due (pending: next_attempt_at; dispatching: the
-- expired locked_until). Counts and one timestamp per status, never rows or
-- ids. Always four rows, zero counts included.
--
-- One branch per status so each reads its own partial index (an index-only
-- scan once the visibility map is current) instead of the whole table. The
-- counts cost a pass over each index: call it at metrics intervals, not per
-- claim.
CREATE FUNCTION once_outbox_stats(p_now timestamptz)
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
    SELECT 'dispatched'::text, count(*), NULL::timestamptz
      FROM public.outbox_events e WHERE e.status = 'dispatched'
    UNION ALL
    SELECT 'dead_letter'::text, count(*), NULL::timestamptz
      FROM public.outbox_events e WHERE e.status = 'dead_letter'
$$;

-- Functions are executable by PUBLIC by default: take that away, then give
-- EXECUTE to the Dispatcher's group role only. The application role gets it
-- only through membership in once_dispatcher (Bootstrap's default).
REVOKE ALL ON FUNCTION once_outbox_due_workspaces(timestamptz, uuid, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION once_outbox_dispatched_workspaces(timestamptz, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION once_outbox_stats(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_outbox_due_workspaces(timestamptz, uuid, int) TO once_dispatcher;
GRANT EXECUTE ON FUNCTION once_outbox_dispatched_workspaces(timestamptz, int) TO once_dispatcher;
GRANT EXECUTE ON FUNCTION once_outbox_stats(timestamptz) TO once_dispatcher;

-- Hand the functions to once_discovery, so they run with its BYPASSRLS. As
-- in 001: ALTER ... OWNER needs the new owner to hold CREATE on the schema,
-- granted for these statements only.
GRANT CREATE ON SCHEMA public TO once_discovery;
ALTER FUNCTION once_outbox_due_workspaces(timestamptz, uuid, int) OWNER TO once_discovery;
ALTER FUNCTION once_outbox_dispatched_workspaces(timestamptz, int) OWNER TO once_discovery;
ALTER FUNCTION once_outbox_stats(timestamptz) OWNER TO once_discovery;
REVOKE CREATE ON SCHEMA public FROM once_discovery;
