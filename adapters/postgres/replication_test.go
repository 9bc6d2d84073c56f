package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The application role can read what the start-up check needs: here the
// shared test server, a primary without standbys.
func TestApplicationRoleReadsTheReplication(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	r, err := postgres.ReadReplication(context.Background(), db.App)
	require.NoError(t, err)
	assert.False(t, r.InRecovery)
	assert.NotEmpty(t, r.SynchronousCommit)
	assert.False(t, r.Synchronous(), "the shared test server has no synchronous standby")
}
