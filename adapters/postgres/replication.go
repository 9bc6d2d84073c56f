package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
)

// Replication is what the server says of its replication to standbys, as
// far as the application role can see it: the settings that decide whether
// a commit waits for a standby, and how many standbys stream from it
// (pg_stat_replication lists every WAL sender to any role; only its
// details are restricted).
type Replication struct {
	// InRecovery: the server is a standby itself (read-only).
	InRecovery bool
	// SynchronousStandbyNames and SynchronousCommit are the settings in
	// effect for this role's sessions.
	SynchronousStandbyNames string
	SynchronousCommit       string
	// Standbys is how many WAL senders are connected.
	Standbys int
}

// readReplication asks for it all in one statement.
const readReplication = `SELECT pg_is_in_recovery(), current_setting('synchronous_standby_names'),
       current_setting('synchronous_commit'), (SELECT count(*) FROM pg_stat_replication)`

// ReadReplication reads the replication of the server db reaches.
func ReadReplication(ctx context.Context, db bun.IDB) (Replication, error) {
	var r Replication
	err := db.QueryRowContext(ctx, readReplication).Scan(&r.InRecovery, &r.SynchronousStandbyNames, &r.SynchronousCommit, &r.Standbys)
	if err != nil {
		return r, fmt.Errorf("read the replication settings: %w", err)
	}
	return r, nil
}

// Synchronous reports whether a commit is acknowledged only once a
// synchronous standby has it: synchronous_standby_names names one, and
// synchronous_commit waits for it (on, remote_apply, or remote_write,
// which survives the primary's crash though not the standby's own at the
// same moment). With local or off it does not wait, whatever the names.
// Only then does a failover to that standby lose no acknowledged commit.
func (r Replication) Synchronous() bool {
	return r.SynchronousStandbyNames != "" && slices.Contains([]string{"on", "remote_apply", "remote_write"}, r.SynchronousCommit)
}
