// Package pgsandbox makes a throwaway PostgreSQL database, bootstrapped and
// migrated exactly as production is: a fresh database owned by a fresh owner
// role, and a fresh application role (member of once_app) to connect as.
// Tests (through pgtest) and the benchmark use it; names are unique, so many
// can exist at once.
package pgsandbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	schema "github.com/oncehq/once/sql"
)

// Sandbox is one throwaway database.
type Sandbox struct {
	superDSN  string
	Name      string
	OwnerRole string
	AppRole   string
	// AppDSN connects as the application role: no BYPASSRLS, owns nothing.
	AppDSN string
	// OwnerDSN connects as the schema owner that ran the migrations.
	OwnerDSN string
	App      *bun.DB
	Owner    *bun.DB
}

// Create bootstraps and migrates a database named prefix_<random>. The
// returned sandbox must be dropped even when err is not nil (it may be half
// made); Drop tolerates what does not exist.
func Create(ctx context.Context, superDSN, prefix string) (*Sandbox, error) {
	return CreateWithSchema(ctx, superDSN, prefix, schema.FS)
}

// CreateWithSchema is Create with the migrations of migrations instead of
// the binary's own: a test of a migration starts from the schema before
// it.
func CreateWithSchema(ctx context.Context, superDSN, prefix string, migrations fs.FS) (*Sandbox, error) {
	suffix := randomSuffix()
	s := &Sandbox{
		superDSN:  superDSN,
		Name:      prefix + "_" + suffix,
		OwnerRole: prefix + "_" + suffix + "_owner",
		AppRole:   prefix + "_" + suffix + "_app",
	}
	err := postgres.Bootstrap(ctx, superDSN, postgres.BootstrapConfig{
		Database: s.Name, OwnerRole: s.OwnerRole, AppRole: s.AppRole,
	})
	if err != nil {
		return s, fmt.Errorf("bootstrap: %w", err)
	}
	if s.OwnerDSN, err = withUserAndDatabase(superDSN, s.OwnerRole, s.Name); err != nil {
		return s, err
	}
	if s.AppDSN, err = withUserAndDatabase(superDSN, s.AppRole, s.Name); err != nil {
		return s, err
	}
	if s.Owner, err = postgres.Open(ctx, s.OwnerDSN); err != nil {
		return s, fmt.Errorf("connect as owner: %w", err)
	}
	if err := postgres.Migrate(ctx, s.Owner, migrations); err != nil {
		return s, fmt.Errorf("migrate: %w", err)
	}
	if s.App, err = postgres.Open(ctx, s.AppDSN); err != nil {
		return s, fmt.Errorf("connect as app: %w", err)
	}
	return s, nil
}

// Drop closes the pools and removes the database and its login roles.
// WITH (FORCE) ends connections still open; the login roles can only go
// once the database is gone; the cluster-wide group roles stay.
func (s *Sandbox) Drop(ctx context.Context) error {
	if s.App != nil {
		_ = s.App.Close()
	}
	if s.Owner != nil {
		_ = s.Owner.Close()
	}
	db, err := sql.Open("pgx", s.superDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	var errs []error
	for _, stmt := range []string{
		`DROP DATABASE IF EXISTS ` + quote(s.Name) + ` WITH (FORCE)`,
		`DROP ROLE IF EXISTS ` + quote(s.AppRole),
		`DROP ROLE IF EXISTS ` + quote(s.OwnerRole),
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", stmt, err))
		}
	}
	return errors.Join(errs...)
}

// SuperuserDSN connects to the sandbox database as the superuser it was made
// with, for test checks that must see every workspace's rows (row-level
// security does not bind a superuser). Never for the code under test.
func (s *Sandbox) SuperuserDSN() string {
	u, err := url.Parse(s.superDSN)
	if err != nil {
		return s.superDSN
	}
	u.Path = "/" + s.Name
	return u.String()
}

// Ping checks that the server answers at dsn.
func Ping(ctx context.Context, dsn string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

// Redact hides the password of a URL DSN, for messages.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func quote(ident string) string { return pgx.Identifier{ident}.Sanitize() }

// withUserAndDatabase rewrites a URL DSN to log in as user to database,
// keeping host, port and options. The sandbox roles have no password (local
// trust authentication).
func withUserAndDatabase(dsn, user, database string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("the superuser DSN must be a postgres:// URL")
	}
	u.User = url.User(user)
	u.Path = "/" + database
	return u.String(), nil
}
