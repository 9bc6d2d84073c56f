-- 010_discovery_probes: the due-workspace discovery probes each workspace
-- it visits, instead of letting the planner read a whole backlog.
--
-- 002's once_outbox_due_workspaces kept a visited workspace if
-- EXISTS (a due row of it). The planner may turn that EXISTS into a merge
-- semi join, and does once one workspace holds a large backlog: it then
-- reads outbox_events_pending_idx from end to end for the whole walk.
-- Measured with 500,000 events pending in one workspace: 2,470 index
-- pages, 27-55 ms per call, where the walk itself read 13; the Dispatcher
-- calls it every round, so every other workspace's events waited for it
-- (once-bench fairness: quiet p99 11x that of the run without the backlog).
--
-- A LATERAL subquery with LIMIT 1 cannot be pulled up into a join: it runs
-- once per visited workspace, one descent of the index to the workspace's
-- oldest entry, whatever the size of its backlog. The function is
-- otherwise 002's: same arguments, same answer, same owner and grants
-- (CREATE OR REPLACE keeps them).
CREATE OR REPLACE FUNCTION once_outbox_due_workspaces(p_now timestamptz, p_after uuid, p_limit int)
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
           CROSS JOIN LATERAL (SELECT 1 FROM public.outbox_events e
                                WHERE e.status = 'pending' AND e.workspace_id = w.workspace_id
                                  AND e.next_attempt_at <= p_now
                                LIMIT 1) AS due_event
          WHERE w.workspace_id IS NOT NULL
          LIMIT greatest(p_limit, 0))
        UNION
        (SELECT w.workspace_id FROM leased_ws w
           CROSS JOIN LATERAL (SELECT 1 FROM public.outbox_events e
                                WHERE e.status = 'dispatching' AND e.workspace_id = w.workspace_id
                                  AND e.locked_until <= p_now
                                LIMIT 1) AS expired_lease
          WHERE w.workspace_id IS NOT NULL
          LIMIT greatest(p_limit, 0))
    )
    SELECT due.workspace_id FROM due
     ORDER BY due.workspace_id
     LIMIT greatest(p_limit, 0)
$$;
