package postgres_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// lookups counts the statements that look up an event's subscribed
// webhook endpoints.
type lookups struct{ n atomic.Int32 }

func (l *lookups) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if strings.Contains(e.Query, "= ANY (event_types)") {
		l.n.Add(1)
	}
	return ctx
}

func (l *lookups) AfterQuery(context.Context, *bun.QueryEvent) {}

// An operation's end in a workspace without any enabled webhook endpoint
// makes no look-up of its subscribers (the operation's UPDATE said there
// is none) and writes no delivery; once the workspace has an endpoint
// subscribed, the end looks it up and writes its delivery. A disabled
// endpoint counts as none.
func TestAnEndInAWorkspaceWithoutEndpointsLooksNoSubscriberUp(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var seen lookups
	db.App.AddQueryHook(&seen)
	uow := postgres.NewUnitOfWork(db.App)
	ws := newID(t)
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "ws", CreatedAt: t0})
	})
	endOne := func() int {
		t.Helper()
		op := model.Operation{ID: newID(t), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationRunning,
			ResourceType: "store", ResourceID: newID(t), CreatedBy: newID(t), CreatedAt: t0, UpdatedAt: t0}
		transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Create(ctx, op) })
		transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
			op.Succeed(t0.Add(time.Second))
			return jobs.SaveEnded(ctx, tx, op)
		})
		var deliveries int
		require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			events, err := tx.Outbox().List(ctx, "", 100)
			for _, e := range events {
				if e.Type == model.EventWebhookDeliver && e.AggregateID == op.ID {
					deliveries++
				}
			}
			return err
		}))
		return deliveries
	}

	require.Zero(t, endOne(), "deliveries without an endpoint")
	require.Zero(t, seen.n.Load(), "subscriber look-ups without an endpoint")

	endpoint := model.WebhookEndpoint{
		ID: newID(t), WorkspaceID: ws, URL: "https://hooks.example.com/once", Enabled: false,
		EventTypes: []string{model.WebhookOperationSucceeded}, SecretVersion: 1, SealedSecret: []byte("sealed"), CreatedAt: t0, UpdatedAt: t0,
	}
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		return ports.Repository[ports.WebhookEndpointRepository](tx).Create(ctx, endpoint)
	})
	require.Zero(t, endOne(), "deliveries with a disabled endpoint")
	require.Zero(t, seen.n.Load(), "subscriber look-ups with a disabled endpoint only")

	endpoint.Enabled = true
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		return ports.Repository[ports.WebhookEndpointRepository](tx).Update(ctx, endpoint)
	})
	require.Equal(t, 1, endOne(), "deliveries with an enabled endpoint")
	require.Equal(t, int32(1), seen.n.Load(), "subscriber look-ups with an enabled endpoint")
}
