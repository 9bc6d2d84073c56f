package postgres_test

import (
	"context"
	"testing"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/internal/pgtest"
)

// Every table that holds tenant rows must have row-level security enabled,
// forced, and a policy; the application role must not be able to step
// around it. Read from the catalogs, so a new table cannot be forgotten.
func TestCatalogEveryTenantTableHasForcedRLS(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	rows, err := db.Owner.QueryContext(ctx, `
SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
       (SELECT count(*) FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid) AS policies
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public'
   AND c.relkind IN ('r', 'p')
   AND (c.relname = 'workspaces'
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname = 'workspace_id'
                      AND a.attnum > 0 AND NOT a.attisdropped))
 ORDER BY c.relname`)
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
	for _, table := range tenantTables {
		if !seen[table] {
			t.Errorf("tenant table %s not found in the catalog", table)
		}
	}

	// The policies cast the setting, never the column, and fail closed.
	var badPolicies int
	if err := db.Owner.NewRaw(`
SELECT count(*) FROM pg_catalog.pg_policies
 WHERE schemaname = 'public'
   AND (qual !~ '^\((workspace_id|id) = \( SELECT \(NULLIF\(current_setting\(''app.workspace_id''::text, true\), ''''::text\)\)::uuid AS "nullif"\)\)$'
        OR with_check IS NULL OR with_check <> qual)`).Scan(ctx, &badPolicies); err != nil {
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

	// Every SECURITY DEFINER function runs with a fixed search_path (so a
	// caller cannot shadow a table or an operator with objects of its own),
	// is not executable by PUBLIC, and is owned by the narrow discovery role.
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
		if config != "search_path=pg_catalog, public" {
			t.Errorf("%s: SECURITY DEFINER with proconfig %q, want a fixed search_path=pg_catalog, public", fn, config)
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
}
