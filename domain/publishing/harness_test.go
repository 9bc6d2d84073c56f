package publishing_test

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
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/publishing"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

const secret = "sk_live_never_logged"

type harness struct {
	uow     *testkit.CrashingUoW
	sealer  *aesgcm.Sealer
	sim     *platformsim.Sim
	svc     *publishing.Service
	handler *publishing.PublishHandler
	logs    *testkit.LogBuffer
	p       model.Principal
}

func newHarness(t *testing.T, opts ...platformsim.Option) *harness {
	t.Helper()
	keys, err := aesgcm.ParseKeys("k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	require.NoError(t, err)
	sealer, err := aesgcm.NewSealer(keys)
	require.NoError(t, err)
	h := &harness{
		uow:    testkit.NewCrashingUoW(memory.NewUnitOfWork(memory.NewDB())),
		sealer: sealer,
		sim:    platformsim.New(opts...),
		logs:   &testkit.LogBuffer{},
		p:      model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin},
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.svc = publishing.NewService(h.uow, system.NewClock(), system.NewIDs())
	h.handler = publishing.NewPublishHandler(h.uow, h.sim, sealer, system.NewClock(), log)
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

func (h *harness) product(t *testing.T, title string) model.Product {
	t.Helper()
	now := system.NewClock().Now()
	p := model.Product{
		ID: uuid.New(), WorkspaceID: h.p.WorkspaceID, Title: title, Description: "a fine " + title,
		PriceMinor: 1999, Currency: "EUR", Revision: 1, CreatedAt: now, UpdatedAt: now,
	}
	h.tx(t, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, p) })
	return p
}

// editProduct saves a new revision of the draft.
func (h *harness) editProduct(t *testing.T, id uuid.UUID, title string) model.Product {
	t.Helper()
	var saved model.Product
	h.tx(t, func(ctx context.Context, tx ports.Tx) error {
		p, err := tx.Products().Get(ctx, id)
		if err != nil {
			return err
		}
		p.Title = title
		saved, err = tx.Products().Update(ctx, p, p.Revision)
		return err
	})
	return saved
}

// publish runs Publish as the API does and returns the message the
// Dispatcher would publish.
func (h *harness) publish(t *testing.T, productID, storeID uuid.UUID) (model.Publication, model.Operation, ports.Message) {
	t.Helper()
	pub, op, err := h.tryPublish(productID, storeID)
	require.NoError(t, err)
	var msg ports.Message
	h.tx(t, func(ctx context.Context, tx ports.Tx) error {
		evs, err := tx.Outbox().List(ctx, model.OutboxPending, 100)
		for _, e := range evs {
			if e.AggregateID == pub.ID {
				msg = ports.MessageOf(e)
			}
		}
		return err
	})
	require.Equal(t, model.EventListingPublish, msg.Type)
	return pub, op, msg
}

func (h *harness) tryPublish(productID, storeID uuid.UUID) (model.Publication, model.Operation, error) {
	var pub model.Publication
	var op model.Operation
	err := h.uow.Transact(context.Background(), h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		pub, op, err = h.svc.Publish(ctx, tx, h.p, productID, storeID)
		return err
	})
	return pub, op, err
}

func (h *harness) state(t *testing.T, pubID, opID uuid.UUID) (model.Publication, model.Operation) {
	t.Helper()
	var pub model.Publication
	var op model.Operation
	h.tx(t, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if pub, err = ports.Repository[ports.PublicationRepository](tx).Get(ctx, pubID); err != nil {
			return err
		}
		op, err = tx.Operations().Get(ctx, opID)
		return err
	})
	return pub, op
}
