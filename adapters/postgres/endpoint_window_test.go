package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// An endpoint committed while a job's end records its outcome, before
// the end writes its operation, is one the end announces to: the
// operation ended after the endpoint existed. The end read at its start
// that there was none and wrote no announcement: its operation's UPDATE
// finds the endpoint, and the end rolls back, CodeUnavailable (sql/035:
// once_endpoint_appeared), to be run again, which announces. (Before
// PrefetchJobEnd the operation's UPDATE read the presence itself, and saw
// it.)
func TestAnEndpointCommittedBeforeAJobsEndWritesItsOperationHearsOfTheEnd(t *testing.T) {
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(db.App)
	ctx := context.Background()
	store, op := verification(t, uow)
	ws := op.WorkspaceID
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "ws", CreatedAt: t0})
	})
	require.NoError(t, startJob(ctx, uow, op))

	end := func(addEndpoint bool) error {
		return uow.Transact(ports.WithRefusalsAtCommit(ctx), ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.PrefetchJobEnd(ctx, op.ID); err != nil {
				return err
			}
			read, err := tx.Stores().Get(ctx, store.ID)
			if err != nil {
				return err
			}
			if addEndpoint {
				// While the end records its outcome, a user adds an endpoint.
				transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
					return ports.Repository[ports.WebhookEndpointRepository](tx).Create(ctx, model.WebhookEndpoint{
						ID: newID(t), WorkspaceID: ws, URL: "https://hooks.example.com/once", Enabled: true,
						EventTypes: []string{model.WebhookOperationSucceeded}, SecretVersion: 1, SealedSecret: []byte("sealed"),
						CreatedAt: t0, UpdatedAt: t0,
					})
				})
			}
			read.Status, read.UpdatedAt = model.StoreVerified, t0.Add(2*time.Second)
			if err := tx.Stores().Update(ctx, read); err != nil {
				return err
			}
			ended := op
			ended.Succeed(t0.Add(2 * time.Second))
			return jobs.SaveEnded(ctx, tx, ended)
		})
	}
	err := end(true)
	require.True(t, domain.IsCode(err, domain.CodeUnavailable), "an end that announced nothing while an endpoint appeared: %v", err)
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		got, err := tx.Operations().Get(ctx, op.ID)
		require.NoError(t, err)
		require.Equal(t, model.OperationRunning, got.Status, "rolled back, to run again")
		return nil
	})
	require.NoError(t, end(false), "the end run again")

	deliveries := 0
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		events, err := tx.Outbox().List(ctx, "", 100)
		for _, e := range events {
			if e.Type == model.EventWebhookDeliver && e.AggregateID == op.ID {
				deliveries++
			}
		}
		return err
	})
	require.Equal(t, 1, deliveries, "the end's announcement to the endpoint committed before its operation's UPDATE")
}
