package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A publication names a product, at a revision, and a store.
var _ = registerKindRow("publications", kindRow{
	cols: ", product_id, store_id, product_revision", vals: ", $7, $6, 1",
	seed: func(ctx context.Context, tx ports.Tx, r seedRefs) error {
		return ports.Repository[ports.PublicationRepository](tx).Create(ctx, model.Publication{
			TaskState: r.task(), ProductID: r.product, StoreID: r.store, ProductRevision: 1,
		})
	},
})

// Of two publishes of one product to one store at once, the second names
// the first in waits_behind: LastInLine waits, on the line's advisory
// lock, for the first transaction to end and then reads what it
// committed. Without the wait both would name the same earlier one. The
// wait is observed in pg_stat_activity, not timed.
func TestLastInLineWaitsForAnOpenPublishOfTheLine(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := newUoW(db)
	ws := seedWorkspace(t, uow, t0.Add(time.Hour))
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	var seeded, product, store, op uuid.UUID
	require.NoError(t, super.QueryRow(`SELECT id, product_id, store_id, operation_id FROM publications WHERE workspace_id = $1`, ws).
		Scan(&seeded, &product, &store, &op))

	first := model.Publication{TaskState: model.NewTaskState(uuid.New(), ws, t0), ProductID: product, StoreID: store, ProductRevision: 1}
	first.OperationID = op
	firstWritten, releaseFirst := make(chan struct{}), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			repo := ports.Repository[ports.PublicationRepository](tx)
			var err error
			if first.WaitsBehind, err = repo.LastInLine(ctx, product, store); err != nil {
				return err
			}
			if err := repo.Create(ctx, first); err != nil {
				return err
			}
			close(firstWritten)
			<-releaseFirst
			return nil
		})
	}()
	<-firstWritten
	require.Equal(t, seeded, first.WaitsBehind, "the seeded publication was the last")

	second := make(chan uuid.UUID, 1)
	secondDone := make(chan error, 1)
	go func() {
		secondDone <- uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			last, err := ports.Repository[ports.PublicationRepository](tx).LastInLine(ctx, product, store)
			second <- last
			return err
		})
	}()
	for waiting := false; !waiting; {
		select {
		case last := <-second:
			close(releaseFirst)
			require.NoError(t, <-firstDone)
			t.Fatalf("the second read the line's last (%s) while the first publish was open", last)
		default:
		}
		require.NoError(t, super.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory')`).Scan(&waiting))
	}
	close(releaseFirst)
	require.NoError(t, <-firstDone)
	require.NoError(t, <-secondDone)
	require.Equal(t, first.ID, <-second, "the second names the first")
}
