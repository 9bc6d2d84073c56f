// Package pgtest gives each test its own PostgreSQL database (a pgsandbox),
// dropped when the test ends. Tests can run in parallel, in several packages
// at once.
package pgtest

import (
	"context"
	"io/fs"
	"os"
	"testing"
	"time"

	schema "github.com/oncehq/once/sql"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

// EnvSuperuserDSN names the environment variable with a superuser DSN of
// the test server.
const EnvSuperuserDSN = "ONCE_TEST_PG_SUPERUSER_DSN"

// DefaultSuperuserDSN is used when EnvSuperuserDSN is unset.
const DefaultSuperuserDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// DB is one test's database.
type DB = pgsandbox.Sandbox

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
	return NewWithSchema(t, schema.FS)
}

// NewWithSchema is New with the migrations of migrations instead of the
// binary's own (a test of a migration starts from the schema before it).
func NewWithSchema(t testing.TB, migrations fs.FS) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	superDSN := SuperuserDSN()
	pingCtx, cancelPing := context.WithTimeout(ctx, 3*time.Second)
	defer cancelPing()
	if err := pgsandbox.Ping(pingCtx, superDSN); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: PostgreSQL is unreachable (%s=%s): %v", EnvSuperuserDSN, pgsandbox.Redact(superDSN), err)
		}
		t.Skipf("pgtest: PostgreSQL is unreachable, skipping (set %s to a superuser DSN; CI=1 makes this fatal): %v",
			EnvSuperuserDSN, err)
	}

	db, err := pgsandbox.CreateWithSchema(ctx, superDSN, "once_test", migrations)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			t.Errorf("pgtest: cleanup: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return db
}
