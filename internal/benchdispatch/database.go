package benchdispatch

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/oncehq/once/adapters/postgres"
	schema "github.com/oncehq/once/sql"
)

// database is one run's database, bootstrapped and migrated as production
// is (the approach of internal/pgtest): a fresh database owned by a fresh
// owner role, and a fresh application role to connect as.
type database struct {
	superDSN  string
	Name      string
	OwnerRole string
	AppRole   string
	// AppDSN connects as the application role (no BYPASSRLS, owns nothing,
	// member of once_dispatcher).
	AppDSN string
}

// createDatabase bootstraps and migrates a database named after suffix.
// The returned database is to be dropped even when err is not nil (it may
// have been half created); drop tolerates what does not exist.
func createDatabase(ctx context.Context, superDSN, suffix string) (*database, error) {
	d := &database{
		superDSN:  superDSN,
		Name:      "once_bench_" + suffix,
		OwnerRole: "once_bench_" + suffix + "_owner",
		AppRole:   "once_bench_" + suffix + "_app",
	}
	err := postgres.Bootstrap(ctx, superDSN, postgres.BootstrapConfig{
		Database: d.Name, OwnerRole: d.OwnerRole, AppRole: d.AppRole,
	})
	if err != nil {
		return d, err
	}
	ownerDSN, err := withUserAndDatabase(superDSN, d.OwnerRole, d.Name)
	if err != nil {
		return d, err
	}
	if d.AppDSN, err = withUserAndDatabase(superDSN, d.AppRole, d.Name); err != nil {
		return d, err
	}
	owner, err := postgres.Open(ctx, ownerDSN)
	if err != nil {
		return d, fmt.Errorf("connect as owner: %w", err)
	}
	defer owner.Close()
	if err := postgres.Migrate(ctx, owner, schema.FS); err != nil {
		return d, err
	}
	return d, nil
}

// drop removes the database and its login roles. WITH (FORCE) ends
// connections still open; the cluster-wide group roles stay.
func (d *database) drop(ctx context.Context) error {
	db, err := sql.Open("pgx", d.superDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	var errs []error
	for _, stmt := range []string{
		`DROP DATABASE IF EXISTS ` + quote(d.Name) + ` WITH (FORCE)`,
		`DROP ROLE IF EXISTS ` + quote(d.AppRole),
		`DROP ROLE IF EXISTS ` + quote(d.OwnerRole),
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", stmt, err))
		}
	}
	return errors.Join(errs...)
}

// serverVersion is SHOW server_version, asked as the superuser.
func serverVersion(ctx context.Context, superDSN string) (string, error) {
	db, err := sql.Open("pgx", superDSN)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, `SHOW server_version`).Scan(&v); err != nil {
		return "", fmt.Errorf("PostgreSQL at %s: %w", redact(superDSN), err)
	}
	return v, nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func quote(ident string) string { return pgx.Identifier{ident}.Sanitize() }

// withUserAndDatabase rewrites a URL DSN to log in as user to database,
// keeping host, port and options. The roles have no password (local trust
// authentication, as in the tests).
func withUserAndDatabase(dsn, user, database string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("the superuser URL must be a postgres:// URL")
	}
	u.User = url.User(user)
	u.Path = "/" + database
	return u.String(), nil
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
