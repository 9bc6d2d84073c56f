package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/postgres"
)

// replicationCheckTimeout bounds the check: a slow answer must not hold
// the start-up, which the check never fails.
const replicationCheckTimeout = 5 * time.Second

// replicationCheck says at start-up of serve, dispatch and work how a
// failover would treat the commits this process acknowledges: synchronous
// replication is the supported setting (docs/deploy.md); without
// it a failover to a standby loses the commits the standby had not
// received, acknowledged ones included, and a warning says so.
var replicationCheck = fx.Invoke(func(lc fx.Lifecycle, db *bun.DB, log *slog.Logger) {
	lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, replicationCheckTimeout)
		defer cancel()
		r, err := postgres.ReadReplication(ctx, db)
		logReplication(log.With("component", "postgres"), r, err)
		return nil
	}})
})

// logReplication says what r (or err, if it could not be read) means for
// a failover.
func logReplication(log *slog.Logger, r postgres.Replication, err error) {
	attrs := []any{"synchronous_standby_names", r.SynchronousStandbyNames, "synchronous_commit", r.SynchronousCommit, "standbys", r.Standbys}
	switch {
	case err != nil:
		log.Warn("could not check the replication of the primary", "err", err)
	case r.InRecovery:
		log.Warn("DATABASE_URL reaches a standby, which refuses writes: list every host with target_session_attrs=read-write "+
			"(docs/deploy.md)", attrs...)
	case r.Synchronous():
		log.Info("commits wait for a synchronous standby: a failover to it loses no acknowledged write", attrs...)
	default:
		log.Warn("the primary has no synchronous standby: a commit is acknowledged before any standby has it, so a failover "+
			"can lose acknowledged writes (and their events); set synchronous_standby_names on the primary and keep "+
			"synchronous_commit on (docs/deploy.md). A single server with no standby to fail over to may ignore this", attrs...)
	}
}
