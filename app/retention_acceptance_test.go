package app_test

import (
	"database/sql"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The service's own maintenance removes what has had its time: a failed
// operation finished 40 days ago goes (ONCE_OPERATION_RETENTION, 30 days
// by default), a pending one as old stays, and what went is counted in
// once_retention_deleted_total and logged.
func TestPostgresMaintenanceRemovesExpiredOperations(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.CleanupInterval = 20 * time.Millisecond
	s := apitest.Start(t, cfg, db)
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })

	old := time.Now().Add(-40 * 24 * time.Hour)
	insert := func(status string) uuid.UUID {
		id := uuid.New()
		_, err := super.Exec(`INSERT INTO operations (id, workspace_id, kind, status, resource_type, created_by, created_at, updated_at)
			VALUES ($1, $2, 'store.verify', $3, 'store', $4, $5, $5)`, id, s.Workspace, status, s.User, old)
		require.NoError(t, err)
		return id
	}
	finished, live := insert("failed"), insert("pending")
	exists := func(id uuid.UUID) bool {
		var n int
		require.NoError(t, super.QueryRow(`SELECT count(*) FROM operations WHERE id = $1`, id).Scan(&n))
		return n == 1
	}
	apitest.Eventually(t, 30*time.Second, "the expired operation is removed", func() bool { return !exists(finished) })
	assert.True(t, exists(live), "a pending operation never expires")

	// The row goes with the commit, the count and the log line right after
	// it: wait for the count, which is observable, not for the clock.
	metrics := func() string {
		res, err := http.Get(s.OpsURL + "/metrics")
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(body)
	}
	apitest.Eventually(t, 30*time.Second, "the removal is counted", func() bool {
		return strings.Contains(metrics(), `once_retention_deleted_total{kind="operations"}`)
	})
	assert.Contains(t, metrics(), `once_retention_deleted_total{kind="operations"} 1`)
	assert.Contains(t, s.Logs.String(), `"msg":"retention: expired records deleted","component":"maintenance","kind":"operations","deleted":1`)
}
