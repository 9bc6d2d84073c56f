-- 016_operation_cancel: an operation can be cancelled
-- (POST /v1/operations/{id}/cancel).
--
--   status               gains 'cancelled': a user cancelled the
--                        operation before its job called the external
--                        system (or its job stopped at the request); its
--                        job never runs. Finished like succeeded and
--                        failed.
--   cancel_requested_at  when a user asked to cancel a running job (NULL:
--                        never). The job stops where its kind can;
--                        otherwise the operation ends with what the
--                        external system did.
--
-- The CHECK is replaced NOT VALID: every existing row satisfies the old
-- one, which the new one widens, so validating would only scan the table
-- under ACCESS EXCLUSIVE; new and updated rows are checked all the same.
-- The nullable column without a default rewrites no row.
--
-- Retention treats a cancelled operation as a finished one: its partial
-- index and once_expired_workspaces (as 013, but for the operations arm)
-- take it in. CREATE OR REPLACE keeps the owner (once_discovery), the
-- grants of 008 and the search_path of 012.
ALTER TABLE operations
    DROP CONSTRAINT operations_status_check,
    ADD CONSTRAINT operations_status_check
        CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')) NOT VALID,
    ADD COLUMN cancel_requested_at timestamptz;

DROP INDEX IF EXISTS operations_finished_idx;
CREATE INDEX operations_finished_idx ON operations (workspace_id, updated_at)
    WHERE status IN ('succeeded', 'failed', 'cancelled');

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
