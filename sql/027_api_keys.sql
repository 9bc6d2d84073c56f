-- 027_api_keys: a workspace's API keys, the credentials of machine
-- clients, each with a name and scopes.
--
-- Runs as the schema owner. Row-level security is the form of 001:
-- ENABLE + FORCE, one policy tenant_isolation on app.workspace_id; the
-- list index leads with workspace_id (newest first by the UUIDv7 id).
--
--   lookup_id     the short public part of the key's secret
--                 (once_sk_<lookup_id>_<random>), unique across
--                 workspaces: it finds the key before the workspace is
--                 known.
--   hash_key_id   the id of the keyring key (ONCE_IDEMPOTENCY_SECRETS,
--                 derived) the secret was hashed under, so a rotation
--                 keeps keys working.
--   secret_hash   HMAC-SHA256 of the whole secret; the secret itself is
--                 never stored.
--   role          the creator's role when the key was made: what the key
--                 acts as, never more than its scopes allow.
--   last_used_at  to a minute: written at most once a minute per key.
--   revoked_at    a revoked key is kept (lists show it), and refused.
CREATE TABLE api_keys (
    id           uuid        PRIMARY KEY,
    workspace_id uuid        NOT NULL,
    lookup_id    text        NOT NULL,
    name         text        NOT NULL,
    scopes       text[]      NOT NULL,
    created_by   uuid        NOT NULL,
    role         text        NOT NULL CHECK (role IN ('admin', 'member')),
    hash_key_id  text        NOT NULL,
    secret_hash  bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    CONSTRAINT api_keys_lookup_id_key UNIQUE (lookup_id),
    CONSTRAINT api_keys_workspace_id_id_key UNIQUE (workspace_id, id)
);
CREATE INDEX api_keys_workspace_id_idx ON api_keys (workspace_id, id DESC);
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- Rows only, under RLS: no TRUNCATE, no REFERENCES, no DDL.
GRANT SELECT, INSERT, UPDATE, DELETE ON api_keys TO once_app;

-- Authentication finds a key's workspace from its lookup id before any
-- workspace is set: the narrow door of 001 and 004 again. A SECURITY
-- DEFINER function owned by once_discovery (NOLOGIN, NOBYPASSRLS), which
-- may read the lookup id and the workspace id of every row (a column
-- grant and a policy of its own) and nothing else: not the hash, not the
-- name. It answers the workspace id; the row is then read as the
-- application role under that workspace's policy. The policy is named
-- discovery_lookup, not discovery_schedule, so the retention's function
-- (013) never takes this table for a task table.
GRANT SELECT (lookup_id, workspace_id) ON api_keys TO once_discovery;
CREATE POLICY discovery_lookup ON api_keys AS PERMISSIVE FOR SELECT TO once_discovery USING (true);

CREATE FUNCTION once_api_key_workspace(p_lookup_id text)
RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT k.workspace_id FROM public.api_keys k WHERE k.lookup_id = p_lookup_id
$$;
REVOKE ALL ON FUNCTION once_api_key_workspace(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_api_key_workspace(text) TO once_app;
-- As in 001: CREATE on the schema for this statement only.
GRANT CREATE ON SCHEMA public TO once_discovery;
ALTER FUNCTION once_api_key_workspace(text) OWNER TO once_discovery;
REVOKE CREATE ON SCHEMA public FROM once_discovery;
