-- 030_reseal_discovery: `once secrets reseal` visits every workspace.
--
-- The re-seal (domain/secrets) seals every stored secret (store
-- credentials, webhook endpoints' signing secrets) again under the newest
-- key of ONCE_CREDENTIAL_KEYS, so an older key can be retired. It runs as
-- the application role, workspace by workspace under row-level security,
-- as the cleaners do; what it needs across workspaces is their ids, and
-- only their ids, through the same narrow door as the other discoveries
-- (001, 004, 008): a SECURITY DEFINER function owned by once_discovery,
-- which may read the workspaces' id column and nothing else of the table
-- (not the name), seeing every workspace's row through a policy of its
-- own (permissive policies are ORed: for once_discovery the table's
-- predicate becomes true; other roles never match it).
--
-- The walk is by primary key, after a cursor, so a run pages through
-- any number of workspaces with one index range scan per page.

GRANT SELECT (id) ON workspaces TO once_discovery;
CREATE POLICY discovery_list ON workspaces
    AS PERMISSIVE FOR SELECT TO once_discovery
    USING (true);

CREATE FUNCTION once_workspaces_after(p_after uuid, p_limit int)
RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT w.id
      FROM public.workspaces w
     WHERE w.id > p_after
     ORDER BY w.id
     LIMIT greatest(p_limit, 0)
$$;
REVOKE ALL ON FUNCTION once_workspaces_after(uuid, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION once_workspaces_after(uuid, int) TO once_app;
-- ALTER ... OWNER needs the new owner to hold CREATE on the schema (001).
GRANT CREATE ON SCHEMA public TO once_discovery;
ALTER FUNCTION once_workspaces_after(uuid, int) OWNER TO once_discovery;
REVOKE CREATE ON SCHEMA public FROM once_discovery;
