package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The count of what is not dispatched per destination reads the queue
// and the dead letters only: the dispatched history, the bulk of the
// table, is pruned from its plan whatever it holds.
func TestUndeliveredByDestinationNeverReadsTheDispatchedHistory(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	tx, err := db.App.DB.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	ws := uuid.New()
	_, err = tx.ExecContext(ctx, `SELECT set_config('app.workspace_id', $1, true)`, ws.String())
	require.NoError(t, err)
	plan := explain(t, tx.QueryContext, postgres.UndeliveredByDestinationSQL, ws, "webhook/", 10000)
	t.Logf("plan:\n%s", plan)
	require.Contains(t, plan, "outbox_events_live")
	require.Contains(t, plan, "outbox_events_dead")
	require.NotContains(t, plan, "outbox_events_dispatched")
}
