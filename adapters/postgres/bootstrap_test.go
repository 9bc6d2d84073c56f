package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/oncehq/once/adapters/postgres"
	schema "github.com/oncehq/once/sql"
	"github.com/oncehq/once/testsupport/pgtest"
)

func TestBootstrapAndMigrateAreIdempotentAndConcurrencySafe(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t) // bootstrapped and migrated once already
	ctx := context.Background()
	cfg := postgres.BootstrapConfig{Database: db.Name, OwnerRole: db.OwnerRole, AppRole: db.AppRole}

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() { errs <- postgres.Bootstrap(ctx, pgtest.SuperuserDSN(), cfg) })
		wg.Go(func() { errs <- postgres.Migrate(ctx, db.Owner, schema.FS) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	var versions int
	if err := db.Owner.NewRaw(`SELECT count(*) FROM schema_migrations`).Scan(ctx, &versions); err != nil {
		t.Fatal(err)
	}
	entries, _ := schema.FS.ReadDir(".")
	sqlFiles := 0
	for _, e := range entries {
		if len(e.Name()) > 4 && e.Name()[len(e.Name())-4:] == ".sql" {
			sqlFiles++
		}
	}
	if versions != sqlFiles {
		t.Fatalf("schema_migrations has %d versions, want %d", versions, sqlFiles)
	}

	// The app role's session settings: bounded statements and open
	// transactions, custom plans.
	for setting, want := range map[string]string{
		"statement_timeout":                   "30s",
		"idle_in_transaction_session_timeout": "1min",
		"plan_cache_mode":                     "force_custom_plan",
	} {
		var got string
		if err := db.App.NewRaw(`SELECT current_setting(?)`, setting).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("app role %s = %q, want %q", setting, got, want)
		}
	}

	// The group roles are what the bootstrap comment says they are: no
	// login, no BYPASSRLS.
	for _, role := range []string{postgres.AppGroupRole, postgres.DiscoveryGroupRole, postgres.DispatcherGroupRole} {
		var login, bypass bool
		if err := db.Owner.NewRaw(`SELECT rolcanlogin, rolbypassrls FROM pg_roles WHERE rolname = ?`, role).Scan(ctx, &login, &bypass); err != nil {
			t.Fatal(err)
		}
		if login || bypass {
			t.Errorf("%s: login=%v bypassrls=%v", role, login, bypass)
		}
	}

	// The app role may run the Dispatcher (once_dispatcher) by default.
	var member bool
	if err := db.App.NewRaw(`SELECT pg_has_role(current_user, ?, 'USAGE')`, postgres.DispatcherGroupRole).Scan(ctx, &member); err != nil {
		t.Fatal(err)
	}
	if !member {
		t.Errorf("app role is not a member of %s", postgres.DispatcherGroupRole)
	}
}

func TestBootstrapRefusesOddNames(t *testing.T) {
	err := postgres.Bootstrap(context.Background(), pgtest.SuperuserDSN(), postgres.BootstrapConfig{
		Database: `x"; DROP DATABASE postgres; --`, OwnerRole: "o", AppRole: "a",
	})
	if err == nil {
		t.Fatal("want an error")
	}
}
