-- 029_operator_sessions: the operator console's sessions, kept where every
-- process reads them (ports.OperatorSessions). serve, dispatch and work
-- each serve the console on their ops listener; a session signed and kept
-- nowhere (as before) could be ended only by changing the token of every
-- operator, so a logout ended nothing and a lost laptop kept its access
-- for 12 hours. Now a logout deletes its row, `once operator revoke NAME`
-- (or the console's revoke) deletes all of an operator's, and each console
-- request reads its row.
--
-- Runs as the schema owner. Like destination_states (020) the table is
-- the deployment's, not a tenant's: no workspace_id, no tenant_isolation
-- policy, read and written outside any workspace's transaction; the grant
-- is what keeps it narrow (the application role reads, adds and deletes
-- rows, nothing else, and reaches no tenant's rows through it).
--
--   id          SHA-256 (hex) of the secret in the session's cookie: a
--               reader of this table cannot present a session.
--   operator    the name of the credential the operator logged in with.
--   credential  a fingerprint of that credential: a session made with a
--               token since replaced is refused.
--   expires_at  the session's end (12 hours after its login); expired
--               rows are deleted by the next login.
CREATE TABLE operator_sessions (
    id         text        PRIMARY KEY,
    operator   text        NOT NULL,
    credential text        NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX operator_sessions_operator ON operator_sessions (operator);
CREATE INDEX operator_sessions_expires_at ON operator_sessions (expires_at);

GRANT SELECT, INSERT, DELETE ON operator_sessions TO once_app;
