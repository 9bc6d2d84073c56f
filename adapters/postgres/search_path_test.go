package postgres_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/pgtest"
)

// A SECURITY DEFINER function runs with its owner's rights on what its
// caller names: a table the caller made in its temporary schema must never
// stand in for the catalog or the schema's own. Bootstrap takes TEMP from
// everyone; this test gives it back to the application role to show that
// the functions do not depend on that. The caller shadows pg_inherits and
// pg_class, so that the catalog seems to say the dead letters' partition
// is a dispatched range past retention; once_outbox_drop_dispatched, run
// as the schema owner, must drop the real expired range and leave the dead
// letters alone.
func TestSecurityDefinerFunctionsIgnoreTheCallersTemporaryTables(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	_, err = super.ExecContext(ctx, `GRANT TEMP ON DATABASE `+pgx.Identifier{db.Name}.Sanitize()+` TO `+pgx.Identifier{db.AppRole}.Sanitize())
	require.NoError(t, err)

	// One session: temporary tables are the session's own.
	conn, err := db.App.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var made int
	require.NoError(t, conn.QueryRowContext(ctx,
		`SELECT once_outbox_prepare_partitions('2001-01-01 00:00:00+00', interval '1 day', 0)`).Scan(&made))
	require.Equal(t, 1, made)
	const expired = "outbox_events_dispatched_20010101t0000"

	for _, stmt := range []string{
		`CREATE TEMP TABLE pg_inherits AS
		 SELECT c.oid AS inhrelid, 'public.outbox_events_dispatched'::regclass::oid AS inhparent, 1 AS inhseqno
		   FROM pg_catalog.pg_class c WHERE c.oid = 'public.` + expired + `'::regclass`,
		`CREATE TEMP TABLE pg_class AS
		 SELECT c.oid, 'outbox_events_dead'::name AS relname, c.relpartbound, c.reltuples
		   FROM pg_catalog.pg_class c WHERE c.oid = 'public.` + expired + `'::regclass`,
		// So that the function's owner may read them.
		`GRANT SELECT ON pg_temp.pg_inherits, pg_temp.pg_class TO PUBLIC`,
	} {
		_, err := conn.ExecContext(ctx, stmt)
		require.NoError(t, err)
	}

	var partitions int
	require.NoError(t, conn.QueryRowContext(ctx,
		`SELECT partitions FROM once_outbox_drop_dispatched('2001-01-02 00:00:00+00')`).Scan(&partitions))

	var dead, expiredLeft sql.NullString
	require.NoError(t, super.QueryRowContext(ctx,
		`SELECT to_regclass('public.outbox_events_dead')::text, to_regclass('public.`+expired+`')::text`).
		Scan(&dead, &expiredLeft))
	require.True(t, dead.Valid, "the dead letters' partition was dropped: the function read the caller's pg_inherits and pg_class")
	require.False(t, expiredLeft.Valid, "the expired range must have been dropped")
	require.Equal(t, 1, partitions)
}
