package catalog_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

const secret = "sk_live_never_logged"

type harness struct {
	uow       *testkit.CrashingUoW
	catalogue *catalogue
	sealer    *aesgcm.Sealer
	sim       *platformsim.Sim
	svc       *catalog.Service
	handler   *catalog.SyncHandler
	logs      *testkit.LogBuffer
	p         model.Principal
}

func newHarness(t *testing.T, opts ...platformsim.Option) *harness {
	t.Helper()
	keys, err := aesgcm.ParseKeys("k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	require.NoError(t, err)
	sealer, err := aesgcm.NewSealer(keys)
	require.NoError(t, err)
	stored := &catalogue{listings: map[uuid.UUID]map[string]bool{}}
	h := &harness{
		uow:       testkit.NewCrashingUoW(recordingUoW{memory.NewUnitOfWork(memory.NewDB()), stored}),
		catalogue: stored,
		sealer:    sealer,
		sim:       platformsim.New(opts...),
		logs:      &testkit.LogBuffer{},
		p:         model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin},
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.svc = catalog.NewService(h.uow, system.NewClock(), system.NewIDs())
	h.handler = catalog.NewSyncHandler(h.uow, h.sim, sealer, system.NewClock(), log)
	t.Cleanup(func() {
		assert.NotContains(t, h.logs.String(), secret, "credentials must never be logged")
	})
	return h
}

func (h *harness) tx(t *testing.T, fn func(ctx context.Context, tx ports.Tx) error) {
	t.Helper()
	require.NoError(t, h.uow.Transact(context.Background(), h.p.WorkspaceID, fn))
}

// store connects a store; verified says whether its credentials were
// verified since.
func (h *harness) store(t *testing.T, verified bool) model.Store {
	t.Helper()
	svc := stores.NewService(h.uow, h.sealer, system.NewClock(), system.NewIDs())
	var s model.Store
	h.tx(t, func(ctx context.Context, tx ports.Tx) error {
		created, err := svc.Create(ctx, tx, h.p, stores.CreateCommand{
			Platform: "shopify", Name: "Shop", ExternalShopID: "shop-" + uuid.NewString(),
			Credentials: model.StoreCredentials{APIKey: "ak_good", APISecret: secret},
		})
		if err != nil {
			return err
		}
		s = created.Store
		if verified {
			s.Status = model.StoreVerified
			return tx.Stores().Update(ctx, s)
		}
		return nil
	})
	return s
}

// start runs StartSync as the API does and returns the message the
// Dispatcher would publish.
func (h *harness) start(t *testing.T, storeID uuid.UUID) (model.CatalogSync, model.Operation, ports.Message) {
	t.Helper()
	cs, op, err := h.tryStart(storeID)
	require.NoError(t, err)
	var msg ports.Message
	h.tx(t, func(ctx context.Context, tx ports.Tx) error {
		evs, err := tx.Outbox().List(ctx, model.OutboxPending, 100)
		for _, e := range evs {
			if e.AggregateID == cs.ID {
				msg = ports.MessageOf(e)
			}
		}
		return err
	})
	require.Equal(t, model.EventCatalogSync, msg.Type)
	return cs, op, msg
}

func (h *harness) tryStart(storeID uuid.UUID) (model.CatalogSync, model.Operation, error) {
	var cs model.CatalogSync
	var op model.Operation
	err := h.uow.Transact(context.Background(), h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		cs, op, err = h.svc.StartSync(ctx, tx, h.p, storeID)
		return err
	})
	return cs, op, err
}

func (h *harness) state(t *testing.T, syncID, opID uuid.UUID) (model.CatalogSync, model.Operation) {
	t.Helper()
	var cs model.CatalogSync
	var op model.Operation
	h.tx(t, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if cs, err = ports.Repository[ports.SyncRepository](tx).Get(ctx, syncID); err != nil {
			return err
		}
		op, err = tx.Operations().Get(ctx, opID)
		return err
	})
	return cs, op
}

func (h *harness) count(t *testing.T, storeID uuid.UUID) int {
	t.Helper()
	return h.catalogue.count(storeID)
}
