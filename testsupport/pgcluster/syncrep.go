package pgcluster

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"
)

// CancelSyncRepWait waits until a backend that filter selects (a condition
// on pg_stat_activity, its arguments args) waits for the synchronous
// standby (wait_event SyncRep), then cancels that wait as an operator's
// pg_cancel_backend does (a statement_timeout or a cancel request ends it
// the same way): PostgreSQL keeps the commit on the primary and answers it
// with a warning. super is a superuser's connection to the server; t fails
// if no such backend waits within a minute.
func CancelSyncRepWait(t testing.TB, super *sql.DB, filter string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var pid int
	for {
		err := super.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND (`+filter+`) LIMIT 1`, args...).Scan(&pid)
		if err == nil {
			break
		}
		if !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("pgcluster: no commit waiting for the standby: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var cancelled bool
	if err := super.QueryRowContext(ctx, `SELECT pg_cancel_backend($1)`, pid).Scan(&cancelled); err != nil || !cancelled {
		t.Fatalf("pgcluster: cancel the wait of backend %d: %v (cancelled %v)", pid, err, cancelled)
	}
}
