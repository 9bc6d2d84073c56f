package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/testsupport/pgtest"
)

// Every table that holds tenant rows must have row-level security enabled,
// forced, and a policy; the application role must not be able to step
// around it. Read from the catalogs, so a new table cannot be forgotten.
func TestCatalogEveryTenantTableHasForcedRLS(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	rows, err := db.Owner.QueryContext(ctx, tenantTablesQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var name string
		var enabled, forced bool
		var policies int
		if err := rows.Scan(&name, &enabled, &forced, &policies); err != nil {
			t.Fatal(err)
		}
		seen[name] = true
		if !enabled || !forced || policies == 0 {
			t.Errorf("%s: rls enabled=%v forced=%v policies=%d", name, enabled, forced, policies)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds.All {
		if !seen[k.Table] {
			t.Errorf("table %s of task kind %s is no tenant table", k.Table, k.EventType)
		}
	}

	// A partition (outbox_events, sql/009) is read and written through its
	// root, whose policies apply to all its rows; queried directly, its own
	// (absent) policies would apply instead. So no role but the owner may
	// touch a partition at all.
	var reachable []string
	if err := db.Owner.NewRaw(`
SELECT c.relname FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relispartition
   AND EXISTS (SELECT 1 FROM unnest(ARRAY[?, ?, ?]) AS r(role)
                WHERE has_table_privilege(r.role, c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES'))
 ORDER BY 1`, db.AppRole, postgres.DiscoveryGroupRole, postgres.DispatcherGroupRole).Scan(ctx, &reachable); err != nil {
		t.Fatal(err)
	}
	if len(reachable) != 0 {
		t.Errorf("partitions reachable around their root's policies: %v", reachable)
	}

	// The policies cast the setting, never the column, and fail closed;
	// the exceptions are the discovery role's read of the scheduling
	// columns (sql/004, and sql/008 for the retention cleanup) and of the
	// workspaces' ids (sql/030, for the re-seal), exactly as reviewed:
	// SELECT only, for that role only, on the tables discovery reads; and
	// its read of an API key's lookup id and workspace (sql/027), which
	// authentication asks before any workspace is set.
	var badPolicies int
	if err := db.Owner.NewRaw(`
SELECT count(*) FROM pg_catalog.pg_policies
 WHERE schemaname = 'public'
   AND NOT (((policyname = 'discovery_schedule' AND tablename IN (?))
             OR (policyname = 'discovery_list' AND tablename = 'workspaces')
             OR (policyname = 'discovery_lookup' AND tablename = 'api_keys'))
            AND permissive = 'PERMISSIVE' AND cmd = 'SELECT' AND roles = ARRAY[?]::name[]
            AND qual = 'true' AND with_check IS NULL)
   AND (qual !~ '^\((workspace_id|id) = \( SELECT \(NULLIF\(current_setting\(''app.workspace_id''::text, true\), ''''::text\)\)::uuid AS "nullif"\)\)$'
        OR with_check IS NULL OR with_check <> qual OR roles <> '{public}')`, bun.In(discoveryTables()), postgres.DiscoveryGroupRole).Scan(ctx, &badPolicies); err != nil {
		t.Fatal(err)
	}
	if badPolicies != 0 {
		t.Errorf("%d policies do not have the reviewed form", badPolicies)
	}

	// The application role: no BYPASSRLS, no superuser, owns nothing, and
	// neither do the group roles it inherits from.
	var super, bypass bool
	if err := db.App.NewRaw(`SELECT rolsuper, rolbypassrls FROM pg_catalog.pg_roles WHERE rolname = current_user`).
		Scan(ctx, &super, &bypass); err != nil {
		t.Fatal(err)
	}
	if super || bypass {
		t.Errorf("app role: superuser=%v bypassrls=%v", super, bypass)
	}
	var inheritedBypass int
	if err := db.App.NewRaw(`
SELECT count(*) FROM pg_catalog.pg_roles r
 WHERE (r.rolbypassrls OR r.rolsuper) AND pg_has_role(current_user, r.oid, 'USAGE')`).Scan(ctx, &inheritedBypass); err != nil {
		t.Fatal(err)
	}
	if inheritedBypass != 0 {
		t.Errorf("app role inherits from %d roles with BYPASSRLS or superuser", inheritedBypass)
	}
	var owned int
	if err := db.App.NewRaw(`
SELECT count(*) FROM pg_catalog.pg_class c
 WHERE pg_has_role(current_user, c.relowner, 'USAGE')`).Scan(ctx, &owned); err != nil {
		t.Fatal(err)
	}
	if owned != 0 {
		t.Errorf("app role owns (directly or through a group) %d relations", owned)
	}
	// TRUNCATE ignores row-level security; the app role must not have it.
	var truncatable int
	if err := db.App.NewRaw(`
SELECT count(*) FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind = 'r'
   AND (has_table_privilege(c.oid, 'TRUNCATE') OR has_table_privilege(c.oid, 'REFERENCES'))`).Scan(ctx, &truncatable); err != nil {
		t.Fatal(err)
	}
	if truncatable != 0 {
		t.Errorf("app role may TRUNCATE or REFERENCES %d tables", truncatable)
	}

	// Every SECURITY DEFINER function runs with a fixed search_path that
	// names pg_temp last (so a caller cannot shadow a table, the catalog's
	// included, or an operator with objects of its own: unnamed, pg_temp
	// is searched first for tables),
	// is not executable by PUBLIC, and is owned by the narrow discovery
	// role. The two exceptions, reviewed: the partition maintenance of
	// sql/009 makes and drops partitions, which only the schema owner can,
	// and sets a time zone (it reads partition bounds as text) and a lock
	// timeout (its DDL must never queue the hot path behind it).
	partitionMaintenance := map[string]bool{
		"once_outbox_prepare_partitions(timestamp with time zone,interval,integer)": true,
		"once_outbox_drop_dispatched(timestamp with time zone)":                     true,
	}
	rows, err = db.Owner.QueryContext(ctx, `
SELECT p.oid::regprocedure::text,
       coalesce(array_to_string(p.proconfig, ','), ''),
       has_function_privilege('public', p.oid, 'EXECUTE'),
       pg_catalog.pg_get_userbyid(p.proowner)
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.prosecdef
 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	definers := 0
	for rows.Next() {
		var fn, config, owner string
		var publicExec bool
		if err := rows.Scan(&fn, &config, &publicExec, &owner); err != nil {
			t.Fatal(err)
		}
		definers++
		if partitionMaintenance[fn] {
			if config != "search_path=pg_catalog, public, pg_temp,TimeZone=UTC,lock_timeout=200ms" {
				t.Errorf("%s: proconfig %q, want the fixed search_path, TimeZone and lock_timeout", fn, config)
			}
			if publicExec {
				t.Errorf("%s: SECURITY DEFINER and executable by PUBLIC", fn)
			}
			if owner != db.OwnerRole {
				t.Errorf("%s: owned by %s, want the schema owner %s", fn, owner, db.OwnerRole)
			}
			continue
		}
		if config != "search_path=pg_catalog, public, pg_temp" {
			t.Errorf("%s: SECURITY DEFINER with proconfig %q, want a fixed search_path=pg_catalog, public, pg_temp", fn, config)
		}
		if publicExec {
			t.Errorf("%s: SECURITY DEFINER and executable by PUBLIC", fn)
		}
		if owner != postgres.DiscoveryGroupRole {
			t.Errorf("%s: SECURITY DEFINER owned by %s, want %s", fn, owner, postgres.DiscoveryGroupRole)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if definers < 4 {
		t.Errorf("found %d SECURITY DEFINER functions, want at least the 4 discovery functions", definers)
	}

	// The functions they call run with the definer's rights too: any
	// function of ours that fixes a search_path names pg_temp last.
	var tempNotLast []string
	if err := db.Owner.NewRaw(`
SELECT p.oid::regprocedure::text
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
 CROSS JOIN LATERAL unnest(p.proconfig) AS c(setting)
 WHERE n.nspname = 'public' AND c.setting LIKE 'search\_path=%'
   AND c.setting !~ ', pg_temp$'
 ORDER BY 1`).Scan(ctx, &tempNotLast); err != nil {
		t.Fatal(err)
	}
	if len(tempNotLast) != 0 {
		t.Errorf("functions whose search_path does not name pg_temp last: %v", tempNotLast)
	}
}

// No role of ours has BYPASSRLS (or is a superuser): not the login roles,
// not the group roles Bootstrap makes, not any role they are members of,
// and not any role that owns or is granted anything in the schema. Read
// from the catalogs, so a role added later cannot be forgotten.
func TestCatalogNoRoleOfOursBypassesRLS(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	rows, err := db.Owner.QueryContext(ctx, `
WITH RECURSIVE seeds(oid) AS (
    SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname IN (?)
    UNION SELECT c.relowner FROM pg_catalog.pg_class c
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
    UNION SELECT p.proowner FROM pg_catalog.pg_proc p
           JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
    UNION SELECT a.grantee FROM pg_catalog.pg_class c
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace,
           LATERAL aclexplode(c.relacl) a WHERE n.nspname = 'public'
    UNION SELECT a.grantee FROM pg_catalog.pg_attribute att
           JOIN pg_catalog.pg_class c ON c.oid = att.attrelid
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace,
           LATERAL aclexplode(att.attacl) a WHERE n.nspname = 'public'
    UNION SELECT a.grantee FROM pg_catalog.pg_proc p
           JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace,
           LATERAL aclexplode(p.proacl) a WHERE n.nspname = 'public'
    UNION SELECT a.grantee FROM pg_catalog.pg_namespace n,
           LATERAL aclexplode(n.nspacl) a WHERE n.nspname = 'public'
), ours(oid) AS (
    SELECT oid FROM seeds WHERE oid <> 0 -- 0 is PUBLIC
    UNION SELECT m.roleid FROM pg_catalog.pg_auth_members m JOIN ours o ON m.member = o.oid
)
SELECT r.rolname, r.rolbypassrls, r.rolsuper
  FROM ours JOIN pg_catalog.pg_roles r ON r.oid = ours.oid
 ORDER BY 1`, bun.In([]string{postgres.AppGroupRole, postgres.DiscoveryGroupRole, postgres.DispatcherGroupRole, db.AppRole, db.OwnerRole}))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var checked []string
	for rows.Next() {
		var name string
		var bypass, super bool
		if err := rows.Scan(&name, &bypass, &super); err != nil {
			t.Fatal(err)
		}
		checked = append(checked, name)
		if bypass || super {
			t.Errorf("role %s: bypassrls=%v superuser=%v", name, bypass, super)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(checked, postgres.DiscoveryGroupRole) || !slices.Contains(checked, db.AppRole) || !slices.Contains(checked, db.OwnerRole) {
		t.Errorf("checked %v: the roles of once are missing", checked)
	}
}

// The discovery role sees the workspace ids, statuses and due times of
// every workspace, and nothing else: not a payload, not a saved response,
// no other table, and it writes nothing.
func TestCatalogDiscoveryRoleSeesSchedulingColumnsOnly(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	super, err := sql.Open("pgx", db.SuperuserDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close()
	conn, err := super.Conn(ctx) // SET ROLE is per session
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wsA, wsB := newID(t).String(), newID(t).String()
	for _, ws := range []string{wsA, wsB} {
		for _, table := range []string{"workspaces", "outbox_events", "idempotency_requests", "stores"} {
			if _, err := conn.ExecContext(ctx, insertFor(table, ws)); err != nil {
				t.Fatalf("seed %s: %v", table, err)
			}
		}
	}
	if _, err := conn.ExecContext(ctx, `SET ROLE `+postgres.DiscoveryGroupRole); err != nil {
		t.Fatal(err)
	}

	var workspaces int
	if err := conn.QueryRowContext(ctx, `SELECT count(DISTINCT workspace_id) FROM (
		SELECT workspace_id, status, next_attempt_at, locked_until, dispatched_at FROM outbox_events) e`).Scan(&workspaces); err != nil {
		t.Fatalf("the scheduling columns of outbox_events: %v", err)
	}
	if workspaces != 2 {
		t.Errorf("outbox_events: the discovery role sees %d workspaces, want both", workspaces)
	}
	if err := conn.QueryRowContext(ctx, `SELECT count(DISTINCT workspace_id) FROM (
		SELECT workspace_id, expires_at FROM idempotency_requests) r`).Scan(&workspaces); err != nil {
		t.Fatalf("the scheduling columns of idempotency_requests: %v", err)
	}
	if workspaces != 2 {
		t.Errorf("idempotency_requests: the discovery role sees %d workspaces, want both", workspaces)
	}
	// The workspaces' ids, and nothing else of them (sql/030, the re-seal).
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM workspaces WHERE id IN ('`+wsA+`', '`+wsB+`')`).Scan(&workspaces); err != nil {
		t.Fatalf("the ids of workspaces: %v", err)
	}
	if workspaces != 2 {
		t.Errorf("workspaces: the discovery role sees %d of them, want both", workspaces)
	}

	for _, stmt := range []string{
		`SELECT event_payload FROM outbox_events`,
		`SELECT last_error FROM outbox_events`,
		`SELECT traceparent FROM outbox_events`,
		`SELECT * FROM outbox_events`,
		`SELECT response_body FROM idempotency_requests`,
		`SELECT request_fingerprint FROM idempotency_requests`,
		`SELECT status FROM idempotency_requests`,
		`SELECT * FROM idempotency_requests`,
		`SELECT id FROM stores`,
		`SELECT id FROM operations`,
		`SELECT name FROM workspaces`,
		`SELECT * FROM workspaces`,
		`UPDATE outbox_events SET status = status`,
		`DELETE FROM outbox_events`,
		`DELETE FROM idempotency_requests`,
		`INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload)
			VALUES (gen_random_uuid(), '` + wsA + `', 't', 'store', gen_random_uuid(), '{}')`,
	} {
		_, err := conn.ExecContext(ctx, stmt)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s: want permission denied (42501), got %v", strings.Join(strings.Fields(stmt), " "), err)
		}
	}
}

// discoveryTables are the tables the discovery role reads the scheduling
// columns of: the outbox, the idempotency records, the operations, the
// table of every kind whose rows expire and those its own retention rule
// reads (kindRow.discoveryTables).
func discoveryTables() []string {
	// media: the expiry of uploads never completed (sql/018) discovers
	// the workspaces holding some.
	tables := []string{"outbox_events", "idempotency_requests", "operations", "media"}
	for _, k := range kinds.Expiring() {
		tables = append(tables, k.Table)
		tables = append(tables, kindRows[k.Table].discoveryTables...)
	}
	return tables
}
