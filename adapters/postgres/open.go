// Package postgres is the PostgreSQL adapter of once: bun on the pgx driver,
// row-level security on every tenant table, and the reviewed SQL that
// idempotency and the outbox depend on.
//
// The service connects as an application login role (member of once_app): it
// owns no table and has no BYPASSRLS, and every transaction sets
// app.workspace_id as its first statement (UnitOfWork). Migrations run as a
// separate owner role (Migrate); roles and the database come from Bootstrap.
package postgres

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Open connects to dsn with the pgx driver and checks the connection. The
// caller closes the returned *bun.DB.
func Open(ctx context.Context, dsn string) (*bun.DB, error) {
	sqldb, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db := bun.NewDB(sqldb, pgdialect.New())
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	return db, nil
}
