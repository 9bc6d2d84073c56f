package work

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// analyzed waits until the Dispatcher has put every queued event on the
// stream (all of them in the dispatched history), then ANALYZEs the run's
// database, so that the worker's statements are planned as on a database
// whose statistics autovacuum keeps (every minute at most). Without it,
// the run, shorter than autovacuum's first look, had the planner guess
// at the tables just filled: it read a message's event through a bitmap of
// all its workspace's events in the dispatched slice (the workspace-leading
// index outbox_events_operation_idx, ANDed with the id's), 2,000 entries
// per job, where with statistics it reads the one entry of the id's index.
func analyzed(ctx context.Context, super *sql.DB, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var left int
		if err := super.QueryRowContext(ctx, `SELECT count(*) FROM outbox_events WHERE status <> 'dispatched'`).Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d events not dispatched after %s", left, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	_, err := super.ExecContext(ctx, `ANALYZE`)
	return err
}
