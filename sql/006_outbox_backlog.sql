-- 006_outbox_backlog: the operator console's view of the backlog, per
-- workspace, through the same narrow door as the Dispatcher's discovery.
--
-- Runs as the schema owner. Operators look across workspaces: which ones
-- hold pending, dispatching or dead-lettered events, how many, and since
-- when the oldest due one has waited. As with the functions of 002, the
-- answer is workspace ids and counts, never rows: the console then reads a
-- workspace's dead letters in a transaction scoped to that workspace, under
-- row-level security, like the Dispatcher claims them.
--
-- once_discovery owns it and reads only the columns 004 granted it
-- (workspace_id, status, next_attempt_at, locked_until): not the payload,
-- not last_error. It is NOBYPASSRLS; the discovery_schedule policy of 004
-- lets it see those columns in every workspace.

-- once_outbox_backlog: up to p_limit workspaces with an id greater than
-- p_after (the caller's cursor), in id order, holding events that are not
-- dispatched: the count per status and the oldest due instant at p_now
-- (pending: next_attempt_at; dispatching: the expired locked_until; NULL
-- when nothing is due). Each status is read through its partial index of
-- 001/002; dispatched events, the bulk of the table, are not read. The
-- counts cost a pass over those indexes after the cursor: call it when an
-- operator opens the console, not in a loop.
CREATE FUNCTION once_outbox_backlog(p_now timestamptz, p_after uuid, p_limit int)
RETURNS TABLE (workspace_id uuid, pending bigint, dispatching bigint, dead_letter bigint, oldest_due_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
    SELECT e.workspace_id,
           count(*) FILTER (WHERE e.status = 'pending'),
           count(*) FILTER (WHERE e.status = 'dispatching'),
           count(*) FILTER (WHERE e.status = 'dead_letter'),
           least(min(e.next_attempt_at) FILTER (WHERE e.status = 'pending' AND e.next_attempt_at <= p_now),
                 min(e.locked_until) FILTER (WHERE e.status = 'dispatching' AND e.locked_until <= p_now))
      FROM public.outbox_events e
     WHERE e.status IN ('pending', 'dispatching', 'dead_letter')
       AND e.workspace_id > p_after
     GROUP BY e.workspace_id
     ORDER BY e.workspace_id
     LIMIT greatest(p_limit, 0)
$$;

-- As in 002: not for PUBLIC, EXECUTE for once_dispatcher only (the
-- application role holds it by default), owned by once_discovery.
REVOKE ALL ON FUNCTION once_outbox_backlog(timestamptz, uuid, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_outbox_backlog(timestamptz, uuid, int) TO once_dispatcher;

GRANT CREATE ON SCHEMA public TO once_discovery;
ALTER FUNCTION once_outbox_backlog(timestamptz, uuid, int) OWNER TO once_discovery;
REVOKE CREATE ON SCHEMA public FROM once_discovery;
