-- 019_webhook_endpoints: the URLs a workspace's events are pushed to,
-- signed per the Standard Webhooks specification.
--
-- Runs as the schema owner. Row-level security is the form of 001 and 003:
-- ENABLE + FORCE, one policy tenant_isolation on app.workspace_id; the
-- list index leads with workspace_id (newest first by the UUIDv7 id).
--
--   event_types        the events delivered, each one the service knows
--                      (checked by the service, not here, so a new event
--                      type needs no migration).
--   secret_version     grows at each rotation; the sealed secret is bound
--                      to it (AES-GCM associated data), so an older
--                      ciphertext copied into the column does not open.
--   sealed_secret      the signing secret, sealed as store credentials are.
--   sealed_previous_secret, previous_secret_expires_at
--                      the secret before the last rotation, still used to
--                      sign until it expires; both NULL when there is none.
CREATE TABLE webhook_endpoints (
    id                         uuid        PRIMARY KEY,
    workspace_id               uuid        NOT NULL,
    url                        text        NOT NULL,
    event_types                text[]      NOT NULL DEFAULT '{}',
    enabled                    boolean     NOT NULL,
    secret_version             int         NOT NULL CHECK (secret_version >= 1),
    sealed_secret              bytea       NOT NULL,
    sealed_previous_secret     bytea,
    previous_secret_expires_at timestamptz,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    updated_at                 timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT webhook_endpoints_workspace_id_id_key UNIQUE (workspace_id, id),
    CONSTRAINT webhook_endpoints_previous_secret_check
        CHECK ((sealed_previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_workspace_id_idx ON webhook_endpoints (workspace_id, id DESC);
ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_endpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_endpoints
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- Rows only, under RLS: no TRUNCATE, no REFERENCES, no DDL.
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints TO once_app;
