-- 018_media_upload_expiry: the clean-up of media registered and never
-- uploaded discovers the workspaces holding some through
-- once_expired_workspaces, as the retention does (kind 'media_uploads':
-- media still awaiting their upload, by created_at). The discovery role
-- may read the three columns that takes, as 008 granted for the task
-- tables; updated_at is not granted, so 'media' itself never passes the
-- check of a plain task table (whose finished rows would be succeeded or
-- failed ones, which media have not). The index serves the probe.
--
-- The function is 016's (cancelled operations are finished) with the one
-- arm added; CREATE OR REPLACE keeps its owner (once_discovery) and grants.

GRANT SELECT (workspace_id, status, created_at) ON media TO once_discovery;
CREATE POLICY discovery_schedule ON media AS PERMISSIVE FOR SELECT TO once_discovery USING (true);
CREATE INDEX media_awaiting_upload_idx ON media (workspace_id, created_at) WHERE status = 'awaiting_upload';

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
        tbl := 'operations'; finished := $f$status IN ('succeeded', 'failed', 'cancelled')$f$;
    WHEN 'publications' THEN
        tbl := 'publications'; finished := $f$status = 'failed'$f$;
    WHEN 'media_uploads' THEN
        tbl := 'media'; finished := $f$status = 'awaiting_upload'$f$; at := 'created_at';
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
