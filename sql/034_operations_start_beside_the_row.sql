-- 034_operations_start_beside_the_row: an operation's start writes no
-- index, and no write of an operation keeps an index no query reads.
--
-- A job updates its operation twice (running at its start, its outcome at
-- its end), and an UPDATE that changes an indexed column writes a new
-- entry into every index of the table, not only the one whose key moved.
-- operations had four: the primary key, (workspace_id, id DESC) for the
-- list, (workspace_id, created_at), and operations_finished_idx, the
-- retention's (workspace_id, updated_at) WHERE status IN (finished). A
-- partial index's predicate counts as indexed, so both UPDATEs changed
-- indexed columns (status and updated_at): each added a tuple to the heap
-- and three or four index entries, the largest statement of a job in
-- PostgreSQL (docs/benchmarks.md, "Where a job's CPU goes").
--
--   * (workspace_id, created_at) serves no statement: the list goes by id,
--     the retention by the time an operation finished. Dropped.
--   * finished_at is updated_at once the operation is finished (succeeded,
--     failed or cancelled), NULL before: a column PostgreSQL derives
--     (GENERATED ... STORED), so no writer can set it wrong. The
--     retention's index keys on it instead of status and updated_at, and
--     its statements (retention_sql.go, once_expired_workspaces) ask it the
--     same question: finished_at < horizon is exactly status finished and
--     updated_at < horizon. The start (pending to running) and a cancel
--     request (running) leave every indexed column as it was, so
--     PostgreSQL can write them beside the row (a HOT update: no index
--     entry) when its page has room, which pruning the page's dead
--     versions usually makes. The end still writes the remaining indexes.
--
-- Adding a stored generated column rewrites operations and its indexes
-- under ACCESS EXCLUSIVE: on a large table, let retention run first.
-- The function is 018's with the operations arm on finished_at; CREATE OR
-- REPLACE keeps its owner (once_discovery) and grants.
DROP INDEX operations_workspace_created_idx;

ALTER TABLE operations ADD COLUMN finished_at timestamptz
    GENERATED ALWAYS AS (CASE WHEN status IN ('succeeded', 'failed', 'cancelled') THEN updated_at END) STORED;

DROP INDEX operations_finished_idx;
CREATE INDEX operations_finished_idx ON operations (workspace_id, finished_at) WHERE finished_at IS NOT NULL;

GRANT SELECT (finished_at) ON operations TO once_discovery;

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
        tbl := 'operations'; finished := 'finished_at IS NOT NULL'; at := 'finished_at';
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
