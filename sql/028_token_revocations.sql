-- 028_token_revocations: access tokens refused before their expiry, for
-- the whole fleet (ports.TokenRevocations, domain/revocation).
--
-- Runs as the schema owner. Every process that verifies tokens reads the
-- changes of these tables every few seconds (ONCE_TOKEN_REVOCATION_REFRESH)
-- into memory and checks each request there, never here. So the tables
-- are the fleet's, not a tenant's, as destination_states (020) is: read
-- whole outside any workspace's transaction, no workspace_id column and
-- no tenant_isolation policy. A cutoff's subject names a workspace and a
-- user ("<workspace id>/<user id>", as a destination's key may name a
-- webhook endpoint); the rows hold no payload, no credential, never a
-- token (a revoked token is named by its jti, or the SHA-256 of its
-- text). What keeps them narrow is the grant: rows only, these two tables.
--
--   revoked_tokens  one row per token revoked by its bearer (a logout);
--                   deleted by the sweep once expires_at (its exp plus
--                   the leeway) has passed: the token is refused anyway.
--   token_cutoffs   per (workspace, user), the tokens issued before
--                   not_before are refused ("sign out everywhere"); one
--                   row each at most, kept (a token of any age could
--                   otherwise come back).
--   recorded_at     when the row was last written (the transaction's
--                   start): the readers ask for what was recorded since
--                   their last read, less a minute for the transactions
--                   that had begun and not committed then
--                   (adapters/postgres token_revocations_sql.go).
CREATE TABLE revoked_tokens (
    token_id    text        PRIMARY KEY CHECK (length(token_id) BETWEEN 1 AND 300),
    expires_at  timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revoked_tokens_recorded_at_idx ON revoked_tokens (recorded_at);
CREATE INDEX revoked_tokens_expires_at_idx ON revoked_tokens (expires_at);

CREATE TABLE token_cutoffs (
    subject     text        PRIMARY KEY CHECK (length(subject) = 73),
    not_before  timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX token_cutoffs_recorded_at_idx ON token_cutoffs (recorded_at);

-- Rows only: no TRUNCATE, no REFERENCES, no TRIGGER. Cutoffs are never
-- deleted by the service.
GRANT SELECT, INSERT, UPDATE, DELETE ON revoked_tokens TO once_app;
GRANT SELECT, INSERT, UPDATE ON token_cutoffs TO once_app;
