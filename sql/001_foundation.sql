-- 001_foundation: tenants, idempotency records, operations, stores, outbox.
--
-- Runs as the schema owner login role (never as the application role). The
-- cluster-wide group roles once_app and once_discovery already exist: the
-- bootstrap step (postgres.Bootstrap) creates them, because roles are not
-- part of one database and a migration must not need CREATEROLE.
--
-- Row-level security, the same on every tenant table:
--   * ENABLE + FORCE, so even the owner is filtered (FORCE) and the
--     application role, which owns nothing and has no BYPASSRLS, always is.
--   * one policy, USING and WITH CHECK alike:
--       workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid)
--     - the setting is cast, never the column, so the predicate stays an
--       index condition on workspace_id (casting the column turned a 0.7 ms
--       claim into a 1.6 s sequential scan);
--     - (SELECT ...) evaluates it once per statement, not once per row;
--     - nullif: after set_config(..., true) commits, the setting reads '' (not
--       NULL) for the rest of the session; '' -> NULL -> no row matches, so a
--       transaction that forgot to set the workspace sees and writes nothing
--       instead of failing on a cast.
--   * indexes lead with workspace_id, the column every policy filters on.

GRANT USAGE ON SCHEMA public TO once_app, once_discovery;

-- workspaces: the tenant itself, so its policy is on id.
CREATE TABLE workspaces (
    id         uuid        PRIMARY KEY,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE workspaces ENABLE ROW LEVEL SECURITY;
ALTER TABLE workspaces FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON workspaces
    USING (id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- workspace_members: who may act in a workspace. Users live in the identity
-- provider; we keep their ids only.
CREATE TABLE workspace_members (
    workspace_id uuid        NOT NULL REFERENCES workspaces (id),
    user_id      uuid        NOT NULL,
    role         text        NOT NULL CHECK (role IN ('admin', 'member')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);
ALTER TABLE workspace_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE workspace_members FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON workspace_members
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- idempotency_requests: one row per (workspace, user, method, path, key).
-- Written in the business transaction and completed in it, so a committed row
-- is always 'completed'. No request body is stored, only an HMAC fingerprint
-- and the id of the secret that made it (secret rotation).
CREATE TABLE idempotency_requests (
    workspace_id        uuid        NOT NULL,
    user_id             uuid        NOT NULL,
    method              text        NOT NULL,
    path                text        NOT NULL,
    idempotency_key     uuid        NOT NULL,
    fingerprint_key_id  text        NOT NULL,
    request_fingerprint bytea       NOT NULL,
    status              text        NOT NULL CHECK (status IN ('in_progress', 'completed')),
    response_status     int,
    response_headers    jsonb,
    response_body       bytea,
    created_at          timestamptz NOT NULL DEFAULT now(),
    completed_at        timestamptz,
    expires_at          timestamptz NOT NULL DEFAULT now() + interval '48 hours',
    PRIMARY KEY (workspace_id, user_id, method, path, idempotency_key),
    -- A completed record can always be replayed.
    CHECK (status <> 'completed' OR (response_status IS NOT NULL AND completed_at IS NOT NULL))
);
-- The cleaner deletes expired rows workspace by workspace, and discovery
-- skips over it to find workspaces with expired rows.
CREATE INDEX idempotency_requests_expiry_idx ON idempotency_requests (workspace_id, expires_at);
ALTER TABLE idempotency_requests ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_requests FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_requests
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- operations: the user-visible truth of asynchronous work; clients poll it.
CREATE TABLE operations (
    id            uuid        PRIMARY KEY,
    workspace_id  uuid        NOT NULL,
    kind          text        NOT NULL,
    status        text        NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
    resource_type text        NOT NULL,
    resource_id   uuid,
    -- sanitized, client-safe reason; NULL unless failed
    error         text,
    created_by    uuid        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operations_workspace_created_idx ON operations (workspace_id, created_at);
ALTER TABLE operations ENABLE ROW LEVEL SECURITY;
ALTER TABLE operations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON operations
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- stores: connected marketplace shops. Credentials are only ever stored
-- sealed (AES-GCM, bound to the row's ids); the unique constraint is the
-- database's guarantee of "no duplicate store", and the adapter maps its name
-- to STORE_ALREADY_EXISTS.
CREATE TABLE stores (
    id                 uuid        PRIMARY KEY,
    workspace_id       uuid        NOT NULL,
    platform           text        NOT NULL,
    name               text        NOT NULL,
    external_shop_id   text        NOT NULL,
    status             text        NOT NULL CHECK (status IN ('pending_verification', 'verified', 'verification_failed')),
    credential_version int         NOT NULL CHECK (credential_version >= 0),
    sealed_credentials bytea       NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT stores_workspace_platform_shop_key UNIQUE (workspace_id, platform, external_shop_id)
);
ALTER TABLE stores ENABLE ROW LEVEL SECURITY;
ALTER TABLE stores FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON stores
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- outbox_events: jobs recorded in the business transaction, delivered
-- at-least-once by the Dispatcher. The payload holds ids and versions only
-- (the adapter runs domain.CheckPayloadSafe before every insert).
CREATE TABLE outbox_events (
    id              uuid        PRIMARY KEY,
    workspace_id    uuid        NOT NULL,
    event_type      text        NOT NULL,
    aggregate_type  text        NOT NULL,
    aggregate_id    uuid        NOT NULL,
    event_payload   jsonb       NOT NULL,
    status          text        NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'dispatching', 'dispatched', 'dead_letter')),
    attempt_count   int         NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    locked_by       text,
    locked_until    timestamptz,
    -- sanitized, bounded; kept for operators on dead letters
    last_error      text,
    traceparent     text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    dispatched_at   timestamptz,
    -- a lease is always bounded, so a crashed dispatcher's events come back
    CHECK (status <> 'dispatching' OR locked_until IS NOT NULL)
)
-- A queue table: rows are inserted, updated twice and deleted at a steady
-- rate. The default scale factor (20% of the table) lets dead tuples pile up
-- for minutes and makes claims slow; vacuum after a fixed, small number of
-- changes instead (a few seconds' worth of events).
WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 5000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000
);
-- Due events of a workspace (the Dispatcher's claim, and discovery).
CREATE INDEX outbox_events_pending_idx ON outbox_events (workspace_id, next_attempt_at)
    WHERE status = 'pending';
-- Expired leases (the rescuer).
CREATE INDEX outbox_events_dispatching_idx ON outbox_events (workspace_id, locked_until)
    WHERE status = 'dispatching';
-- Retention of delivered events (the cleaner).
CREATE INDEX outbox_events_dispatched_idx ON outbox_events (workspace_id, dispatched_at)
    WHERE status = 'dispatched';
ALTER TABLE outbox_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON outbox_events
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- The application role reads and writes tenant rows, under RLS, and nothing
-- else: no DDL, no ownership, no TRUNCATE (TRUNCATE ignores RLS).
GRANT SELECT, INSERT, UPDATE, DELETE ON
    workspaces, workspace_members, idempotency_requests, operations, stores, outbox_events
    TO once_app;

-- Discovery: which workspaces have expired idempotency records. It is the one
-- narrow door across workspaces: SECURITY DEFINER, owned by once_discovery
-- (NOLOGIN, BYPASSRLS, SELECT on this table only), returning workspace ids
-- and nothing else. The cleaner then works workspace by workspace under RLS.
--
-- The query is a skip scan over idempotency_requests_expiry_idx: the
-- recursive part walks the distinct workspace ids one index probe at a time,
-- and each workspace is kept if one probe finds an expired row. The cost
-- grows with the number of workspaces visited, not with the number of rows,
-- and LIMIT stops the walk early.
--
-- search_path is fixed so a caller cannot shadow the table or an operator.
CREATE FUNCTION once_idempotency_expired_workspaces(p_now timestamptz, p_limit int)
RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
    WITH RECURSIVE ws(workspace_id) AS (
        (SELECT r.workspace_id FROM public.idempotency_requests r
          ORDER BY r.workspace_id LIMIT 1)
        UNION ALL
        SELECT (SELECT r.workspace_id FROM public.idempotency_requests r
                 WHERE r.workspace_id > ws.workspace_id
                 ORDER BY r.workspace_id LIMIT 1)
          FROM ws
         WHERE ws.workspace_id IS NOT NULL
    )
    SELECT ws.workspace_id
      FROM ws
     WHERE ws.workspace_id IS NOT NULL
       AND EXISTS (SELECT 1 FROM public.idempotency_requests r
                    WHERE r.workspace_id = ws.workspace_id
                      AND r.expires_at < p_now)
     LIMIT greatest(p_limit, 0)
$$;
REVOKE ALL ON FUNCTION once_idempotency_expired_workspaces(timestamptz, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_idempotency_expired_workspaces(timestamptz, int) TO once_app;
GRANT SELECT ON idempotency_requests TO once_discovery;
-- ALTER ... OWNER needs the new owner to hold CREATE on the schema; grant it
-- for this statement only, so once_discovery cannot create objects later.
GRANT CREATE ON SCHEMA public TO once_discovery;
ALTER FUNCTION once_idempotency_expired_workspaces(timestamptz, int) OWNER TO once_discovery;
REVOKE CREATE ON SCHEMA public FROM once_discovery;
