package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	schema "github.com/oncehq/once/sql"
)

// A database at 024 whose dead letters carry their stage and attempts in
// last_error only (a worker's 'job failed: after <n> attempts: ...')
// migrates through 025 and 026 with both in columns and the text kept;
// events that are not dead letters get no stage.
func TestMigrationToDeadLetterStageCarriesTheDeadLettersOver(t *testing.T) {
	t.Parallel()
	db, super := databaseBefore(t, "025")
	ctx := context.Background()

	ws := uuid.New()
	now := time.Now().UTC().Truncate(time.Microsecond)
	type row struct {
		status, lastError string
		jobAttempts       int
		// what 026 makes of it
		failedIn       string
		wantedAttempts int
	}
	rows := map[string]row{
		"job, counted":   {"dead_letter", "job failed: after 3 attempts: boom", 2, "job", 3},
		"job, one":       {"dead_letter", "job failed: after 1 attempt: boom", 0, "job", 1},
		"job, uncounted": {"dead_letter", "job failed: boom", 0, "job", 0},
		"broker":         {"dead_letter", "cannot publish: broker refused after 6 attempts", 2, "delivery", 2},
		"no error":       {"dead_letter", "", 0, "delivery", 0},
		"pending":        {"pending", "job failed: after 3 attempts: boom", 0, "", 0},
	}
	ids := map[string]uuid.UUID{}
	for name, r := range rows {
		ids[name] = uuid.New()
		_, err := super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, last_error, created_at, job_attempts)
VALUES ($1, $2, 'store.credentials.verify', 'store', gen_random_uuid(), '{}', $3, 0, $4, nullif($5, ''), $4, $6)`,
			ids[name], ws, r.status, now, r.lastError, r.jobAttempts)
		require.NoError(t, err, name)
	}

	require.NoError(t, postgres.Migrate(ctx, db.Owner, schema.FS))

	for name, r := range rows {
		var failedIn sql.NullString
		var lastError sql.NullString
		var attempts int
		require.NoError(t, super.QueryRowContext(ctx, `SELECT failed_in, job_attempts, last_error FROM outbox_events WHERE id = $1`,
			ids[name]).Scan(&failedIn, &attempts, &lastError), name)
		require.Equal(t, r.failedIn, failedIn.String, name)
		require.Equal(t, r.wantedAttempts, attempts, name)
		require.Equal(t, r.lastError, lastError.String, "%s: the text stays for people", name)
	}
}
