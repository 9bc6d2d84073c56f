-- 004_discovery_without_bypassrls: cross-workspace discovery through a
-- policy and column grants, not through BYPASSRLS.
--
-- Runs as the schema owner. The SECURITY DEFINER discovery functions of 001
-- and 002 (which workspaces have expired idempotency records, due or old
-- outbox events, counts per status) are owned by once_discovery, which used
-- to have BYPASSRLS: it could have read every row of every table it was
-- granted, payloads and saved responses included, and the functions' bodies
-- were all that kept it to ids and counts. postgres.Bootstrap now makes
-- once_discovery NOBYPASSRLS, and this migration gives it exactly what
-- those functions read, and nothing else:
--
--   * column privileges: the workspace id and the scheduling columns
--     (status and due times). Not the payload, not the saved response, not
--     the fingerprint, not last_error: reading them is "permission denied",
--     whatever a function body says;
--   * a policy per table, FOR SELECT TO once_discovery USING (true): it
--     sees those columns in every workspace, which is its job. Permissive
--     policies are ORed, so for once_discovery the table's predicate is
--     (tenant_isolation OR true), which the planner folds to true: the skip
--     scans keep their index plans. Other roles never match the policy
--     (the application role is not a member of once_discovery); the owner
--     is (it must be, to hand the functions over) and so sees the rows of
--     these two tables, which, owning them, it could anyway.
--
-- Upgrading a database made by an earlier version: run `once migrate`
-- first, then `once bootstrap` again (which takes BYPASSRLS away from the
-- cluster-wide once_discovery). In the other order the Dispatchers and the
-- cleaners find no work between the two steps; nothing is lost, it waits.
-- once_discovery is shared by every once database of the cluster: migrate
-- them all before bootstrapping.

REVOKE ALL ON idempotency_requests FROM once_discovery;
REVOKE ALL ON outbox_events FROM once_discovery;

GRANT SELECT (workspace_id, expires_at) ON idempotency_requests TO once_discovery;
GRANT SELECT (workspace_id, status, next_attempt_at, locked_until, dispatched_at) ON outbox_events TO once_discovery;

CREATE POLICY discovery_schedule ON idempotency_requests
    AS PERMISSIVE FOR SELECT TO once_discovery
    USING (true);
CREATE POLICY discovery_schedule ON outbox_events
    AS PERMISSIVE FOR SELECT TO once_discovery
    USING (true);
