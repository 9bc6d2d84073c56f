-- 031_due_workspaces_planned_once: the due-workspace discovery keeps its
-- plan for the session instead of planning its body at every call.
--
-- A Dispatcher asks once_outbox_due_workspaces at every wake-up, and a
-- worker's job ends wake it (dispatch.WakeOnEnds): about one call per two
-- jobs under load. As a LANGUAGE sql function that is not inlined (SECURITY
-- DEFINER, SETOF), its body was parsed and planned at each call: two
-- recursive walks and their probes over the partitioned outbox_events, for
-- a few index pages of execution (docs/benchmarks.md, "Where a job's CPU
-- goes": 1.2 ms per call, the largest statement per job). In PL/pgSQL the
-- body is a prepared statement of the session: planned at the first
-- calls, then its generic plan reused (the status predicates are
-- constants, so it keeps to outbox_events_live as before; p_now, p_after
-- and p_limit are parameters of index probes whatever their values).
-- Same arguments, same answer, same body as 014; CREATE OR REPLACE keeps
-- the owner (once_discovery), the grants and the search_path.
CREATE OR REPLACE FUNCTION once_outbox_due_workspaces(p_now timestamptz, p_after uuid, p_limit int)
RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
BEGIN
    RETURN QUERY
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
           CROSS JOIN LATERAL (SELECT 1 FROM public.outbox_events e
                                WHERE e.status = 'pending' AND e.workspace_id = w.workspace_id
                                  AND e.next_attempt_at <= p_now
                                ORDER BY e.next_attempt_at
                                LIMIT 1) AS due_event
          WHERE w.workspace_id IS NOT NULL
          LIMIT greatest(p_limit, 0))
        UNION
        (SELECT w.workspace_id FROM leased_ws w
           CROSS JOIN LATERAL (SELECT 1 FROM public.outbox_events e
                                WHERE e.status = 'dispatching' AND e.workspace_id = w.workspace_id
                                  AND e.locked_until <= p_now
                                ORDER BY e.locked_until
                                LIMIT 1) AS expired_lease
          WHERE w.workspace_id IS NOT NULL
          LIMIT greatest(p_limit, 0))
    )
    SELECT due.workspace_id FROM due
     ORDER BY due.workspace_id
     LIMIT greatest(p_limit, 0);
END
$$;
