-- 035_writes_refused_by_themselves: a write that must change exactly one
-- row fails by itself when it changes none, so it can go with the COMMIT.
--
-- A job's steps end with their writes: its start's UPDATE of the
-- operation, its end's UPDATE of the store and of the operation. Each must
-- change its one row, or the transaction must not commit: the row is
-- gone, or a concurrent delivery (or a cancel) ended the operation first.
-- The service read the rows affected and only then sent COMMIT, a round
-- trip of its own: two of a job's six. Sent in the COMMIT's round trip
-- (adapters/postgres/pipelined_conn.go), a write that changed nothing must
-- raise an error itself, so that PostgreSQL skips the COMMIT that follows
-- it and the transaction rolls back. These raise it; the statements that
-- call them are in adapters/postgres/repositories.go.

-- once_expect_row raises no_data_found ("<what> not found") unless p_rows
-- is 1, the count of an UPDATE's rows:
--   WITH u AS (UPDATE ... RETURNING 1) SELECT once_expect_row(count(*), 'store') FROM u
CREATE FUNCTION once_expect_row(p_rows bigint, p_what text) RETURNS bigint
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_rows <> 1 THEN
        RAISE EXCEPTION '% not found', p_what USING ERRCODE = 'no_data_found';
    END IF;
    RETURN p_rows;
END
$$;

-- once_operation_refused raises why an UPDATE of the operation p_id
-- changed nothing: no_data_found if it is gone, else OC001 with its status
-- as the DETAIL (the service maps it to ErrOperationFinished or
-- ErrOperationStarted). The status is read by a statement of its own: in
-- READ COMMITTED a volatile function's statement takes a new snapshot, so
-- it sees the outcome a concurrent transaction committed while the UPDATE
-- waited for the row, which the UPDATE's own snapshot does not. It runs
-- as its caller, under the workspace's row-level security.
CREATE FUNCTION once_operation_refused(p_workspace uuid, p_id uuid) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    v_status text;
BEGIN
    SELECT status INTO v_status FROM operations WHERE workspace_id = p_workspace AND id = p_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'operation not found' USING ERRCODE = 'no_data_found';
    END IF;
    RAISE EXCEPTION 'operation % already %', p_id, v_status USING ERRCODE = 'OC001', DETAIL = v_status;
END
$$;

-- once_endpoint_appeared raises serialization_failure (the service's
-- "nothing committed, try again"): a job's end read at its start that the
-- workspace had no enabled webhook endpoint, so it wrote no announcement,
-- and the UPDATE that ends the operation finds one now. Announced or not
-- must be decided as of that UPDATE, as when it returned the presence
-- itself; the end runs again and announces.
CREATE FUNCTION once_endpoint_appeared() RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'a webhook endpoint was enabled as the operation ended' USING ERRCODE = 'serialization_failure';
END
$$;

-- As every function here: not for PUBLIC; the application's group role.
REVOKE ALL ON FUNCTION once_expect_row(bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION once_operation_refused(uuid, uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION once_endpoint_appeared() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_expect_row(bigint, text) TO once_app;
GRANT EXECUTE ON FUNCTION once_operation_refused(uuid, uuid) TO once_app;
GRANT EXECUTE ON FUNCTION once_endpoint_appeared() TO once_app;
