package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A job's event is read by a plan PostgreSQL keeps for the connection:
// planned anew at every job, over the outbox's partitions, their indexes
// and the row-level security policy, the read cost several times its
// execution (docs/benchmarks.md, "Round four").
func TestAJobsEventIsReadByAPlanKeptForTheConnection(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(openPool(t, db.AppDSN, 1))
	ws := newID(t)
	for range 3 {
		e, err := model.NewOutboxEvent(newID(t), ws, "store.credentials.verify", "store", newID(t),
			map[string]string{"operation_id": newID(t).String()}, time.Now())
		require.NoError(t, err)
		transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Outbox().Append(ctx, e) })
		transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.PrefetchJob(ctx, e.ID, newID(t)); err != nil {
				return err
			}
			got, err := tx.Outbox().Get(ctx, e.ID)
			require.Equal(t, e.ID, got.ID)
			return err
		})
	}
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		var generic, custom int
		err := postgres.TxDB(tx.(*postgres.Tx)).QueryRowContext(ctx, `SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
			  FROM pg_prepared_statements WHERE statement = ?`, postgres.PrefetchEventQuery).Scan(&generic, &custom)
		require.NoError(t, err)
		if generic < 3 || custom != 0 {
			t.Errorf("the event's read: %d generic and %d custom plans in 3 jobs; want at least 3 generic, no custom", generic, custom)
		}
		return nil
	})
}

// The plan kept for the connection probes each partition by workspace and
// id, whatever the partition's statistics: planned while a partition is
// empty or not yet analyzed (a slice made ahead, a new day's), a plan on
// the workspace's index alone would walk every event of the workspace in
// that partition at each job once it filled.
func TestAJobsEventReadProbesEveryPartitionByItsID(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := postgres.NewOutboxPartitions(db.App, time.Hour).Prepare(ctx, time.Now())
	require.NoError(t, err)
	now := time.Now()

	conn, err := db.App.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `SELECT set_config('app.workspace_id', ?, true)`, newID(t).String())
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `PREPARE job_event(uuid, uuid, timestamptz, timestamptz) AS `+postgres.PrefetchEventQuery)
	require.NoError(t, err)
	var plan string
	require.NoError(t, tx.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) EXECUTE job_event(?, ?, ?, ?)`,
		newID(t), newID(t), now.Add(-time.Hour), now.Add(time.Hour)).Scan(&plan))

	var root []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal([]byte(plan), &root))
	scans := 0
	var walk func(n planNode)
	walk = func(n planNode) {
		if strings.HasPrefix(n.Relation, "outbox_events") {
			scans++
			if !strings.Contains(n.IndexCond, "(id = $2)") {
				t.Errorf("%s is read by %s %q (index condition %q); want a probe by id", n.Relation, n.NodeType, n.IndexName, n.IndexCond)
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root[0].Plan)
	require.Positive(t, scans, "no partition read: %s", plan)
}

// planNode is a node of EXPLAIN (FORMAT JSON)'s plan, as far as these tests
// look.
type planNode struct {
	NodeType  string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	IndexName string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Plans     []planNode `json:"Plans"`
}
