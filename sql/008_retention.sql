-- 008_retention: what the retention cleanup (domain/retention) needs to
-- remove finished operations, finished tasks and old dead letters, the way
-- 002 removes dispatched events: discovery of the workspaces that hold
-- some through a SECURITY DEFINER function (ids only), then bounded
-- DELETEs workspace by workspace under row-level security as the
-- application role.
--
-- Runs as the schema owner. On a large database the CREATE INDEXes below
-- hold a write lock on their table while they build; build them first
-- with CREATE INDEX CONCURRENTLY under the same names if that matters
-- (IF NOT EXISTS then skips them here).

-- When an event became a dead letter: its retention counts from then, not
-- from the event's creation (a redriven event that fails again is a new
-- dead letter). Set by the trigger below on every path that parks an
-- event (publish failures, expired leases, jobs given up on) and cleared
-- by a redrive, so no statement has to remember it. The WHEN clause keeps
-- the trigger off the hot path: claims and marks never call it.
ALTER TABLE outbox_events ADD COLUMN dead_lettered_at timestamptz;
UPDATE outbox_events SET dead_lettered_at = coalesce(dispatched_at, next_attempt_at, created_at)
 WHERE status = 'dead_letter';

CREATE FUNCTION once_outbox_dead_lettered_at() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, public
AS $$
BEGIN
    IF NEW.status = 'dead_letter' THEN
        NEW.dead_lettered_at := now();
    ELSE
        NEW.dead_lettered_at := NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER outbox_events_dead_lettered_at
    BEFORE UPDATE OF status ON outbox_events
    FOR EACH ROW
    WHEN (NEW.status IS DISTINCT FROM OLD.status
          AND (NEW.status = 'dead_letter' OR OLD.status = 'dead_letter'))
    EXECUTE FUNCTION once_outbox_dead_lettered_at();

-- Finished rows by age, per workspace: what the cleanup deletes, oldest
-- first. Partial indexes hold only finished rows (a queue of live ones
-- never reads them). Publications: only failed ones expire (a live or
-- succeeded publication is the "no duplicate publish" rule, kept).
CREATE INDEX IF NOT EXISTS outbox_events_dead_lettered_idx ON outbox_events (workspace_id, dead_lettered_at)
    WHERE status = 'dead_letter';
CREATE INDEX IF NOT EXISTS operations_finished_idx ON operations (workspace_id, updated_at)
    WHERE status IN ('succeeded', 'failed');
CREATE INDEX IF NOT EXISTS catalog_syncs_finished_idx ON catalog_syncs (workspace_id, updated_at)
    WHERE status IN ('succeeded', 'failed');
CREATE INDEX IF NOT EXISTS material_transfers_finished_idx ON material_transfers (workspace_id, updated_at)
    WHERE status IN ('succeeded', 'failed');
CREATE INDEX IF NOT EXISTS publications_failed_idx ON publications (workspace_id, updated_at)
    WHERE status = 'failed';
CREATE INDEX IF NOT EXISTS ai_tasks_finished_idx ON ai_tasks (workspace_id, updated_at)
    WHERE status IN ('succeeded', 'failed');

-- once_expired_workspaces: which workspaces hold rows of p_kind that
-- finished before p_before (for the retention cleanup, which then deletes
-- them in bounded batches under RLS). The same skip scan as 001 and 002
-- (one index probe per distinct workspace over the partial index above,
-- then one probe for an expired row), written once with the table, the
-- "finished" predicate and the time column filled in from a fixed list:
-- p_kind never reaches the SQL text, an unknown kind is an error. An AI
-- task with a billing record is never expired: the record is the
-- customer's invoice trail and references the task.
CREATE FUNCTION once_expired_workspaces(p_kind text, p_before timestamptz, p_limit int)
RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
    tbl      text;
    finished text := $f$status IN ('succeeded', 'failed')$f$;
    at       text := 'updated_at';
    extra    text := '';
BEGIN
    CASE p_kind
    WHEN 'dead_letters' THEN
        tbl := 'outbox_events'; finished := $f$status = 'dead_letter'$f$; at := 'dead_lettered_at';
    WHEN 'operations' THEN
        tbl := 'operations';
    WHEN 'catalog_syncs' THEN
        tbl := 'catalog_syncs';
    WHEN 'material_transfers' THEN
        tbl := 'material_transfers';
    WHEN 'publications' THEN
        tbl := 'publications'; finished := $f$status = 'failed'$f$;
    WHEN 'ai_tasks' THEN
        tbl := 'ai_tasks';
        extra := $f$AND NOT EXISTS (SELECT 1 FROM public.ai_billing_records b
                                     WHERE b.workspace_id = t.workspace_id AND b.task_id = t.id)$f$;
    ELSE
        RAISE EXCEPTION 'once_expired_workspaces: unknown kind %', p_kind;
    END CASE;
    RETURN QUERY EXECUTE format($q$
        WITH RECURSIVE ws(workspace_id) AS (
            (SELECT t.workspace_id FROM public.%1$I t
              WHERE t.%2$s
              ORDER BY t.workspace_id LIMIT 1)
            UNION ALL
            SELECT (SELECT t.workspace_id FROM public.%1$I t
                     WHERE t.%2$s AND t.workspace_id > w.workspace_id
                     ORDER BY t.workspace_id LIMIT 1)
              FROM ws w
             WHERE w.workspace_id IS NOT NULL
        )
        SELECT ws.workspace_id
          FROM ws
         WHERE ws.workspace_id IS NOT NULL
           AND EXISTS (SELECT 1 FROM public.%1$I t
                        WHERE t.%2$s AND t.workspace_id = ws.workspace_id
                          AND t.%3$I < $1 %4$s)
         LIMIT greatest($2, 0)$q$, tbl, finished, at, extra)
    USING p_before, p_limit;
END
$$;

-- What once_discovery may read for it (004's rule: the workspace id and
-- the scheduling columns, never a payload, a result or a reason), and a
-- policy per table that shows it every workspace's rows for those columns.
GRANT SELECT (dead_lettered_at) ON outbox_events TO once_discovery;
GRANT SELECT (workspace_id, status, updated_at) ON operations, catalog_syncs, material_transfers, publications TO once_discovery;
GRANT SELECT (id, workspace_id, status, updated_at) ON ai_tasks TO once_discovery;
GRANT SELECT (workspace_id, task_id) ON ai_billing_records TO once_discovery;
CREATE POLICY discovery_schedule ON operations AS PERMISSIVE FOR SELECT TO once_discovery USING (true);
CREATE POLICY discovery_schedule ON catalog_syncs AS PERMISSIVE FOR SELECT TO once_discovery USING (true);
CREATE POLICY discovery_schedule ON material_transfers AS PERMISSIVE FOR SELECT TO once_discovery USING (true);
CREATE POLICY discovery_schedule ON publications AS PERMISSIVE FOR SELECT TO once_discovery USING (true);
CREATE POLICY discovery_schedule ON ai_tasks AS PERMISSIVE FOR SELECT TO once_discovery USING (true);
CREATE POLICY discovery_schedule ON ai_billing_records AS PERMISSIVE FOR SELECT TO once_discovery USING (true);

-- The cleanup runs in every process (maintenance), as the application
-- role, like the idempotency cleanup of 001.
REVOKE ALL ON FUNCTION once_expired_workspaces(text, timestamptz, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_expired_workspaces(text, timestamptz, int) TO once_app;
GRANT CREATE ON SCHEMA public TO once_discovery;
ALTER FUNCTION once_expired_workspaces(text, timestamptz, int) OWNER TO once_discovery;
REVOKE CREATE ON SCHEMA public FROM once_discovery;
