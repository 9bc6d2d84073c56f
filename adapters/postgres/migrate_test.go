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
