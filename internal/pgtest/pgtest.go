// Package pgtest gives each test its own PostgreSQL database, bootstrapped
// and migrated exactly as production is: a fresh database owned by a fresh
// owner role, and a fresh application role (member of once_app) to connect
// as. Tests can run in parallel, in several packages at once.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	schema "github.com/oncehq/once/sql"
)

// EnvSuperuserDSN names the environment variable with a superuser DSN of
// the test server.
const EnvSuperuserDSN = "ONCE_TEST_PG_SUPERUSER_DSN"

// DefaultSuperuserDSN is used when EnvSuperuserDSN is unset.
const DefaultSuperuserDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// DB is one test's database.
type DB struct {
	Name      string
	AppRole   string
	OwnerRole string
	// AppDSN connects as the application role: no BYPASSRLS, owns nothing.
	AppDSN string
	// OwnerDSN connects as the schema owner that ran the migrations.
	OwnerDSN string
	App      *bun.DB
	Owner    *bun.DB
}

// SuperuserDSN returns the superuser DSN the tests use.
func SuperuserDSN() string {
	if dsn := os.Getenv(EnvSuperuserDSN); dsn != "" {
		return dsn
	}
	return DefaultSuperuserDSN
}

// New creates, bootstraps and migrates a database for t and drops it (and
// its login roles) when t ends. Without a reachable server it skips t, or
// fails it when the CI environment variable is set.
func New(t testing.TB) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	superDSN := SuperuserDSN()
	if err := ping(ctx, superDSN); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: PostgreSQL is unreachable (%s=%s): %v", EnvSuperuserDSN, redact(superDSN), err)
		}
		t.Skipf("pgtest: PostgreSQL is unreachable, skipping (set %s to a superuser DSN; CI=1 makes this fatal): %v",
			EnvSuperuserDSN, err)
	}

	suffix := randomSuffix()
	d := &DB{
		Name:      "once_test_" + suffix,
		OwnerRole: "once_test_" + suffix + "_owner",
		AppRole:   "once_test_" + suffix + "_app",
	}
	t.Cleanup(func() { d.drop(t, superDSN) })

	err := postgres.Bootstrap(ctx, superDSN, postgres.BootstrapConfig{
		Database: d.Name, OwnerRole: d.OwnerRole, AppRole: d.AppRole,
	})
	if err != nil {
		t.Fatalf("pgtest: bootstrap: %v", err)
	}
	if d.OwnerDSN, err = withUserAndDatabase(superDSN, d.OwnerRole, d.Name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if d.AppDSN, err = withUserAndDatabase(superDSN, d.AppRole, d.Name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if d.Owner, err = postgres.Open(ctx, d.OwnerDSN); err != nil {
		t.Fatalf("pgtest: connect as owner: %v", err)
	}
	if err := postgres.Migrate(ctx, d.Owner, schema.FS); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	if d.App, err = postgres.Open(ctx, d.AppDSN); err != nil {
		t.Fatalf("pgtest: connect as app: %v", err)
	}
	return d
}

func (d *DB) drop(t testing.TB, superDSN string) {
	if d.App != nil {
		_ = d.App.Close()
	}
	if d.Owner != nil {
		_ = d.Owner.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", superDSN)
	if err != nil {
		t.Errorf("pgtest: cleanup: %v", err)
		return
	}
	defer db.Close()
	// WITH (FORCE) ends connections a test left open; the login roles can
	// only go once the database (and so everything they own there) is gone.
	// The cluster-wide group roles stay for the next test.
	for _, stmt := range []string{
		`DROP DATABASE IF EXISTS ` + quote(d.Name) + ` WITH (FORCE)`,
		`DROP ROLE IF EXISTS ` + quote(d.AppRole),
		`DROP ROLE IF EXISTS ` + quote(d.OwnerRole),
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Errorf("pgtest: cleanup: %s: %v", stmt, err)
		}
	}
}

func ping(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func quote(ident string) string { return `"` + ident + `"` }

// withUserAndDatabase rewrites a URL DSN to log in as user to database,
// keeping host, port and options. The test roles have no password (local
// trust authentication).
func withUserAndDatabase(dsn, user, database string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("pgtest: %s must be a postgres:// URL", EnvSuperuserDSN)
	}
	u.User = url.User(user)
	u.Path = "/" + database
	return u.String(), nil
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}
