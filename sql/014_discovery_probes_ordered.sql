-- 014_discovery_probes_ordered: each probe of the due-workspace discovery
-- asks for the workspace's oldest due row, so that no statistics make it
-- read the table.
--
-- 010's probe asked for any due row of a workspace (LIMIT 1). When the
-- statistics say there are few workspaces, which ANALYZE concludes when its
-- sample of a large backlog happens to miss the other workspaces' rows,
-- the planner thinks most rows match and that a plain scan stops at the
-- first one soon: each probe then read the whole table (24,172 pages for 8
-- workspaces beside a 200,000-event backlog, TestDiscoveryReadsNoBacklog,
-- one run in a few). Ordered by the index's second column, the probe is
-- one descent of outbox_events_pending_idx (or _dispatching_idx) whatever
-- the statistics: a scan would have to read and sort every match first.
-- Same arguments and answer; CREATE OR REPLACE keeps the owner and grants.
CREATE OR REPLACE FUNCTION once_outbox_due_workspaces(p_now timestamptz, p_after uuid, p_limit int)
RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
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
     LIMIT greatest(p_limit, 0)
$$;
