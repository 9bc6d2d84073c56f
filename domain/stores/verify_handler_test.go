package stores_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

const secret = "sk_live_never_logged"

type harness struct {
	uow     ports.UnitOfWork
	sealer  *aesgcm.Sealer
	sim     *platformsim.Sim
	handler *stores.VerifyHandler
	logs    *testkit.LogBuffer
	ws      uuid.UUID
}

func newHarness(t *testing.T, opts ...platformsim.Option) *harness {
	t.Helper()
	keys, err := aesgcm.ParseKeys("k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	require.NoError(t, err)
	sealer, err := aesgcm.NewSealer(keys)
	require.NoError(t, err)
	h := &harness{
		uow:    memory.NewUnitOfWork(memory.NewDB()),
		sealer: sealer,
		sim:    platformsim.New(opts...),
		logs:   &testkit.LogBuffer{},
		ws:     uuid.New(),
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.handler = stores.NewVerifyHandler(h.uow, h.sim, sealer, system.NewClock(), log)
	t.Cleanup(func() {
		assert.NotContains(t, h.logs.String(), secret, "credentials must never be logged")
	})
	return h
}

// connect creates a store as the API does (store, operation and verify
// event in one transaction) and returns the store, its operation and the
// message the Dispatcher would publish.
func (h *harness) connect(t *testing.T, apiKey string) (model.Store, model.Operation, ports.Message) {
	t.Helper()
	svc := stores.NewService(h.uow, h.sealer, system.NewClock(), system.NewIDs())
	p := model.Principal{WorkspaceID: h.ws, UserID: uuid.New(), Role: model.RoleAdmin}
	var created stores.Created
	var events []model.OutboxEvent
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		created, err = svc.Create(ctx, tx, p, stores.CreateCommand{
			Platform: "shopify", Name: "Shop", ExternalShopID: "shop-" + uuid.NewString(),
			Credentials: model.StoreCredentials{APIKey: apiKey, APISecret: secret},
		})
		if err != nil {
			return err
		}
		events, err = tx.Outbox().List(ctx, model.OutboxPending, 100)
		return err
	}))
	var ev model.OutboxEvent
	for _, e := range events {
		if e.AggregateID == created.Store.ID {
			ev = e
		}
	}
	require.Equal(t, model.EventStoreCredentialsVerify, ev.Type)
	msg := ports.MessageOf(ev)
	return created.Store, created.Operation, msg
}

func (h *harness) state(t *testing.T, storeID, opID uuid.UUID) (model.Store, model.Operation) {
	t.Helper()
	var s model.Store
	var op model.Operation
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if s, err = tx.Stores().Get(ctx, storeID); err != nil {
			return err
		}
		op, err = tx.Operations().Get(ctx, opID)
		return err
	}))
	return s, op
}

// The same message delivered twice verifies once on the platform.
func TestDuplicateDeliveryHasOneEffect(t *testing.T) {
	h := newHarness(t)
	store, op, msg := h.connect(t, "ak_good")

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	require.NoError(t, h.handler.Handle(context.Background(), msg))

	assert.Equal(t, 1, h.sim.EffectCount())
	assert.Equal(t, 1, h.sim.Effects(op.ID.String()), "the operation id is the request token")
	assert.Len(t, h.sim.Calls(), 1, "a finished operation is not sent to the platform again")
	s, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.StoreVerified, s.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Empty(t, o.Error)
	c := h.sim.Calls()[0]
	assert.Equal(t, store.ExternalShopID, c.ExternalShopID)
	assert.Equal(t, platformsim.KeyHash("ak_good"), c.KeyHash, "the handler opened the store's own credentials")
}

// Concurrent duplicates (two workers got the same message) still act once.
func TestConcurrentDuplicatesHaveOneEffect(t *testing.T) {
	h := newHarness(t, platformsim.WithLatency(5*time.Millisecond))
	store, op, msg := h.connect(t, "ak_good")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { assert.NoError(t, h.handler.Handle(context.Background(), msg)) })
	}
	wg.Wait()
	assert.Equal(t, 1, h.sim.EffectCount())
	s, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.StoreVerified, s.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
}

// The platform acted but its answer was lost: the handler asks for a
// redelivery, which gets the first outcome without a second effect.
func TestTimeoutAfterThePlatformActedEndsWithOneEffect(t *testing.T) {
	h := newHarness(t)
	store, op, msg := h.connect(t, "ak_good")
	h.sim.FailAfterEffect(1)

	err := h.handler.Handle(context.Background(), msg)
	require.Error(t, err)
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "redeliver: %v", err)
	s, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.OperationRunning, o.Status)
	assert.Equal(t, model.StorePendingVerification, s.Status)

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.sim.Effects(op.ID.String()))
	assert.Len(t, h.sim.Calls(), 2)
	s, o = h.state(t, store.ID, op.ID)
	assert.Equal(t, model.StoreVerified, s.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
}

func TestOutageBeforeThePlatformActedIsRetried(t *testing.T) {
	h := newHarness(t)
	store, op, msg := h.connect(t, "ak_good")
	h.sim.FailNext(1, nil)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), msg), domain.CodeUnavailable))
	assert.Zero(t, h.sim.EffectCount())
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	s, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.StoreVerified, s.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, 1, h.sim.EffectCount())
}

// A job written for credentials that were since replaced does not call the
// platform; its operation fails as superseded and the store is untouched.
func TestStaleCredentialVersionMakesNoCall(t *testing.T) {
	h := newHarness(t)
	store, op, msg := h.connect(t, "ak_old")
	// The authorization is replaced: version 2, sealed anew.
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		s, err := tx.Stores().Get(ctx, store.ID)
		if err != nil {
			return err
		}
		s.CredentialVersion = 2
		if s.SealedCredentials, err = stores.SealCredentials(h.sealer, s, model.StoreCredentials{APIKey: "ak_new", APISecret: secret}); err != nil {
			return err
		}
		return tx.Stores().Update(ctx, s)
	}))

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Empty(t, h.sim.Calls())
	s, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Equal(t, stores.ReasonSuperseded, o.Error)
	assert.Equal(t, model.StorePendingVerification, s.Status)
	assert.Equal(t, 2, s.CredentialVersion)
}

// Rejected credentials are a verdict: the store is verification_failed and
// the operation failed with a reason that never repeats the key.
func TestInvalidCredentialsFailTheOperationWithoutEchoingTheKey(t *testing.T) {
	h := newHarness(t)
	store, op, msg := h.connect(t, platformsim.InvalidAPIKey)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	s, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.StoreVerificationFailed, s.Status)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Equal(t, platformsim.RejectedReason, o.Error)
	assert.NotContains(t, o.Error, platformsim.InvalidAPIKey)
	assert.NotContains(t, o.Error, secret)
}

// A platform that does echo a secret in its reason gets it redacted.
func TestAReasonThatEchoesASecretIsSanitized(t *testing.T) {
	h := newHarness(t, platformsim.WithRule(func(_, _ string, c model.StoreCredentials) ports.VerifyCredentialsResult {
		return ports.VerifyCredentialsResult{Valid: false, Reason: "bad credentials api_key=" + c.APIKey + " secret=" + c.APISecret}
	}))
	store, op, msg := h.connect(t, "ak_leaky")
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	_, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.NotContains(t, o.Error, "ak_leaky")
	assert.NotContains(t, o.Error, secret)
	assert.Contains(t, o.Error, "[redacted]")
	assert.NotContains(t, h.logs.String(), "ak_leaky")
}

// A permanent platform error ends the operation; it is not retried.
func TestPermanentPlatformErrorFailsTheOperation(t *testing.T) {
	h := newHarness(t)
	store, op, msg := h.connect(t, "ak_good")
	h.sim.FailNext(1, domain.Errorf(domain.CodeForbidden, "app not installed on this shop"))
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	s, o := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Contains(t, o.Error, "app not installed")
	assert.Equal(t, model.StoreVerificationFailed, s.Status)
}

func TestMessagesThatCanNeverSucceedArePermanentErrors(t *testing.T) {
	h := newHarness(t)
	_, _, msg := h.connect(t, "ak_good")

	bad := msg
	bad.Payload = []byte(`{"store_id":`)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Type = "something.else"
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.WorkspaceID = uuid.New() // another workspace's outbox has no such event
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	assert.Empty(t, h.sim.Calls())
}

// A worker that dies after writing the verdict and before its commit has
// logged nothing of it: "store verified" is written after the commit that
// records it, so the log never claims what the database does not hold.
func TestOutcomeIsLoggedOnlyAfterItsCommit(t *testing.T) {
	h := newHarness(t)
	_, _, msg := h.connect(t, "ak_good")
	crashing := testkit.NewCrashingUoW(h.uow)
	logs := &testkit.LogBuffer{}
	handler := stores.NewVerifyHandler(crashing, h.sim, h.sealer, system.NewClock(), slog.New(slog.NewTextHandler(logs, nil)))

	crashing.CrashNext(2) // the start commits, the verdict rolls back
	require.Error(t, handler.Handle(context.Background(), msg))
	assert.NotContains(t, logs.String(), "store verified")

	require.NoError(t, handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, strings.Count(logs.String(), "store verified"), logs.String())
	assert.Equal(t, 1, h.sim.EffectCount(), "the platform's own idempotency: one effect")
}
