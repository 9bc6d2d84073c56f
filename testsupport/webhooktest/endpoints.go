package webhooktest

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// Endpoints is the webhook endpoints' use case over a memory database
// holding one workspace, for the tests of endpoints and deliveries.
type Endpoints struct {
	Service *webhooks.Service
	UoW     ports.UnitOfWork
	// Admin is an admin of the workspace.
	Admin model.Principal
}

// NewEndpoints builds the use case with a test key, clock, the URL
// policy and the resolver its checks use, and limits.
func NewEndpoints(t testing.TB, clock ports.Clock, policy fetchpolicy.Policy, resolver ports.HostResolver, limits webhooks.Limits) Endpoints {
	t.Helper()
	keys, err := aesgcm.ParseKeys("k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := aesgcm.NewSealer(keys)
	if err != nil {
		t.Fatal(err)
	}
	uow := memory.NewUnitOfWork(memory.NewDB())
	ws := uuid.New()
	err = uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "w", CreatedAt: clock.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return Endpoints{
		Service: webhooks.NewService(uow, sealer, clock, system.NewIDs(), policy, resolver, limits), UoW: uow,
		Admin: model.Principal{WorkspaceID: ws, UserID: uuid.New(), Role: model.RoleAdmin},
	}
}
