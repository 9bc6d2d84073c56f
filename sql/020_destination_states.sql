-- 020_destination_states: one record per destination for the whole fleet
-- of workers (ports.DestinationStates): the pace, the circuit breaker with
-- its one probe's lease, and an operator's pause of a marketplace's shop,
-- a platform as a whole, an AI provider, a webhook endpoint.
--
-- Runs as the schema owner. The table is not a tenant's: its key is a
-- destination ("shopify/my-shop", "webhook/<endpoint id>", or a
-- platform's name), which every workspace's jobs may share (two
-- workspaces selling on one shop spend one quota), so it has no
-- workspace_id and no tenant_isolation policy, and is read and written
-- outside any workspace's transaction. What keeps it narrow is the grant:
-- the application role may read, add and replace records, and delete
-- them, on this table only (no TRUNCATE, no REFERENCES, no TRIGGER); it
-- still has no BYPASSRLS and reaches no tenant's rows through it. The
-- records hold no payload, no credential and no tenant's data beyond the
-- destination's name, which the jobs' own rows carry too.
--
--   version     grows by one at each write; a write names the version it
--               read and loses if another came first (adapters/postgres
--               destination_states_sql.go), which is how exactly one
--               worker takes a half-open probe or a last token.
--   state       the Gate's record (domain/destinations, shared.go), JSON
--               its fields only ever added to.
--   updated_at  when it was written last, for an operator (and a later
--               sweep of records idle for long).
CREATE TABLE destination_states (
    key        text        PRIMARY KEY,
    version    bigint      NOT NULL CHECK (version >= 1),
    state      jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE, DELETE ON destination_states TO once_app;
