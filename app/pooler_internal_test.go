package app

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/pgbouncer"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A pooler in session mode whose pool is full (here: one server
// connection, which the probe's first session takes) leaves the probe's
// second session waiting for a server connection that does not come free;
// the same goes for PostgreSQL itself one connection below
// max_connections (which refuses the second at once). The service started
// there before it had a probe, so the probe gives up within its own short
// bound, says so, and start goes on as before (no pooler assumed).
func TestAProbeThatCannotHaveItsSecondSessionDoesNotFailStart(t *testing.T) {
	db := pgtest.New(t)
	bouncer := pgbouncer.Start(t, pgbouncer.Config{Target: "127.0.0.1:5432", Users: []string{db.AppRole}, PoolSize: 1, PoolMode: "session"})
	cfg := Config{DatabaseConfig: DatabaseConfig{DatabaseURL: bouncer.DSN(t, db.AppDSN)}}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), startupConnectTimeout)
	defer cancel()

	pool, err := findPooler(ctx, cfg.DBPool(), cfg.DatabaseConfig, log)
	require.NoError(t, err)
	assert.False(t, pool.TransactionPooler)
	assert.NoError(t, ctx.Err(), "the probe gave up within its own bound, not start-up's")
	assert.Contains(t, logs.String(), "could not check for a transaction pooler")
}
