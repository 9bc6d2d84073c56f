package delivery

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/oncehq/once/testsupport/pgsandbox"
)

// serverVersion is SHOW server_version, asked as the superuser.
func serverVersion(ctx context.Context, superDSN string) (string, error) {
	db, err := sql.Open("pgx", superDSN)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, `SHOW server_version`).Scan(&v); err != nil {
		return "", fmt.Errorf("PostgreSQL at %s: %w", pgsandbox.Redact(superDSN), err)
	}
	return v, nil
}
