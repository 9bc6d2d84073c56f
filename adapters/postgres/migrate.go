package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/uptrace/bun"
)

// migrationLockKey is the advisory lock that serializes migrators of one
// database: a second migrator waits, then finds the version applied.
const migrationLockKey = 0x6f6e63655f6d6967 // "once_mig"

const (
	createMigrationsTable = `
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    text        PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)`
	migrationApplied = `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`
	renameMigration  = `UPDATE schema_migrations SET version = $1 WHERE version = $2`
	recordMigration  = `INSERT INTO schema_migrations (version) VALUES ($1)`
)

// renamedMigrations maps the versions of migration files that were renamed
// after databases had recorded them to their current versions. Migrate
// rewrites an old version to the new one before it looks, so a renamed
// file is never applied twice, and PendingMigrations counts the old name
// as the new.
var renamedMigrations = map[string]string{
	"003_scenarios": "003_task_tables",
}

// Migrate applies the *.sql files at the root of fsys in lexical order, each
// in its own transaction, and records each in schema_migrations. Applied
// versions are skipped. Concurrent migrators are safe: every transaction
// first takes pg_advisory_xact_lock. Run it as the schema owner role.
func Migrate(ctx context.Context, db *bun.DB, fsys fs.FS) error {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("postgres: migrate: %w", err)
		}
		version := strings.TrimSuffix(name, ".sql")
		if err := applyMigration(ctx, db, version, string(body)); err != nil {
			return fmt.Errorf("postgres: migrate %s: %w", name, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *bun.DB, version, body string) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
		// The *sql.Tx directly: bun would read '?' in the DDL as placeholders,
		// and without arguments pgx sends the file as one simple-protocol
		// query, several statements at once.
		tx := btx.Tx
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLockKey)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, createMigrationsTable); err != nil {
			return err
		}
		for old, renamed := range renamedMigrations {
			if renamed != version {
				continue
			}
			if _, err := tx.ExecContext(ctx, renameMigration, version, old); err != nil {
				return err
			}
		}
		var applied bool
		if err := tx.QueryRowContext(ctx, migrationApplied, version).Scan(&applied); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if applied {
			return nil
		}
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, recordMigration, version)
		return err
	})
}

// selectAppliedMigrations lists what Migrate recorded. The application role
// may read it (007_schema_migrations_readable.sql) so that a process can
// tell whether its schema is current without the owner's credentials.
const selectAppliedMigrations = `SELECT version FROM schema_migrations`

// PendingMigrations returns the versions of fsys (as Migrate names them)
// that the database has not recorded, in order: none means the schema is
// current for this binary.
func PendingMigrations(ctx context.Context, db bun.IDB, fsys fs.FS) ([]string, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	rows, err := db.QueryContext(ctx, selectAppliedMigrations)
	if err != nil {
		return nil, fmt.Errorf("postgres: read schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("postgres: read schema_migrations: %w", err)
		}
		applied[v] = true
		if renamed, ok := renamedMigrations[v]; ok {
			applied[renamed] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read schema_migrations: %w", err)
	}
	sort.Strings(names)
	var pending []string
	for _, name := range names {
		if v := strings.TrimSuffix(name, ".sql"); !applied[v] {
			pending = append(pending, v)
		}
	}
	return pending, nil
}
