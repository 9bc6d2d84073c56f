package postgres_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	schema "github.com/oncehq/once/sql"
	"github.com/oncehq/once/testsupport/pgtest"
)

// /readyz asks, as the application role, whether every migration the
// binary embeds is applied.
func TestPendingMigrationsAsTheApplicationRole(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()

	pending, err := postgres.PendingMigrations(ctx, db.App, schema.FS)
	require.NoError(t, err)
	require.Empty(t, pending, "a migrated database is current")

	newer := fstest.MapFS{
		"001_foundation.sql":   {Data: []byte("-- applied")},
		"900_next_feature.sql": {Data: []byte("-- not yet")},
	}
	pending, err = postgres.PendingMigrations(ctx, db.App, newer)
	require.NoError(t, err)
	require.Equal(t, []string{"900_next_feature"}, pending)
}

// A database migrated before 003 was renamed recorded it as 003_scenarios:
// it counts as applied, and Migrate renames the record rather than
// applying the file again (which would fail on its CREATE TABLEs).
func TestARenamedMigrationIsNotAppliedTwice(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := db.Owner.ExecContext(ctx, `UPDATE schema_migrations SET version = '003_scenarios' WHERE version = '003_task_tables'`)
	require.NoError(t, err)

	pending, err := postgres.PendingMigrations(ctx, db.App, schema.FS)
	require.NoError(t, err)
	require.Empty(t, pending, "the old name counts as the new one")

	require.NoError(t, postgres.Migrate(ctx, db.Owner, schema.FS))
	var versions []string
	require.NoError(t, db.Owner.NewRaw(`SELECT version FROM schema_migrations WHERE version LIKE '003%'`).Scan(ctx, &versions))
	require.Equal(t, []string{"003_task_tables"}, versions)
}
