-- 013_retention_tables_by_grant: once_expired_workspaces takes a task
-- table by its name, from the tables granted to the retention, instead of
-- one CASE arm per kind.
--
-- A kind's rows expire when its descriptor says so (domain/kinds); the
-- cleanup then asks this function for the workspaces holding some, naming
-- the kind's table. A task table is in the checked list when its own
-- migration did what 008 did for the first ones: GRANT once_discovery
-- SELECT on its workspace_id, status and updated_at, and CREATE POLICY
-- discovery_schedule on it. Those grants are what the function, running
-- as once_discovery, may read anyway; checking them first turns any other
-- name into the "unknown kind" error, and the name reaches the SQL text
-- only quoted (%I). A plain task table expires its succeeded and failed
-- rows; the records that are no task (dead letters, operations) and the
-- kinds with a rule of their own (publications: only failed ones; AI
-- tasks: never one with a billing record) keep their arm, as in 008.
--
-- As 012: pg_temp last in the search_path, catalogs named with their
-- schema; CREATE OR REPLACE keeps the owner (once_discovery) and the
-- grants of 008.

CREATE OR REPLACE FUNCTION once_expired_workspaces(p_kind text, p_before timestamptz, p_limit int)
RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
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
    WHEN 'publications' THEN
        tbl := 'publications'; finished := $f$status = 'failed'$f$;
    WHEN 'ai_tasks' THEN
        tbl := 'ai_tasks';
        extra := $f$AND NOT EXISTS (SELECT 1 FROM public.ai_billing_records b
                                     WHERE b.workspace_id = t.workspace_id AND b.task_id = t.id)$f$;
    ELSE
        SELECT c.relname INTO tbl
          FROM pg_catalog.pg_class c
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relname = p_kind AND c.relkind IN ('r', 'p')
           AND EXISTS (SELECT 1 FROM pg_catalog.pg_policy p
                        WHERE p.polrelid = c.oid AND p.polname = 'discovery_schedule')
           AND (SELECT count(*) FROM pg_catalog.pg_attribute a
                 WHERE a.attrelid = c.oid AND NOT a.attisdropped
                   AND a.attname IN ('workspace_id', 'status', 'updated_at')
                   AND pg_catalog.has_column_privilege('once_discovery', c.oid, a.attnum, 'SELECT')) = 3;
        IF tbl IS NULL THEN
            RAISE EXCEPTION 'once_expired_workspaces: unknown kind %', p_kind;
        END IF;
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
