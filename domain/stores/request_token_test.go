package stores_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// tokenWorld runs the store use cases as the API does, through the
// idempotency service, on a memory store that a failover can replace by
// one that never received the last commits, with the verification handler
// and the platform simulator.
type tokenWorld struct {
	db      atomic.Pointer[memory.DB]
	idem    *idempotency.Service
	stores  *stores.Service
	handler *stores.VerifyHandler
	sim     *platformsim.Sim
	p       model.Principal
}

func newTokenWorld(t *testing.T) *tokenWorld {
	t.Helper()
	keys, err := aesgcm.ParseKeys("k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	require.NoError(t, err)
	sealer, err := aesgcm.NewSealer(keys)
	require.NoError(t, err)
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	w := &tokenWorld{sim: platformsim.New(), p: model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin}}
	w.db.Store(memory.NewDB())
	w.idem, err = idempotency.NewService(w, fp, system.NewClock(), idempotency.DefaultRetention)
	require.NoError(t, err)
	w.stores = stores.NewService(w, sealer, system.NewClock(), system.NewIDs())
	w.handler = stores.NewVerifyHandler(w, w.sim, sealer, system.NewClock(), slog.New(slog.DiscardHandler))
	return w
}

// Transact implements ports.UnitOfWork on the current database.
func (w *tokenWorld) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	return memory.NewUnitOfWork(w.db.Load()).Transact(ctx, ws, fn)
}

// failover replaces the database by one that has none of its data.
func (w *tokenWorld) failover() { w.db.Store(memory.NewDB()) }

// request runs one idempotent request of method on path with key and
// body, starting a verification with start, and returns what it created
// (zero if it was a replay).
func (w *tokenWorld) request(t *testing.T, path string, key uuid.UUID, body string,
	start func(ctx context.Context, tx ports.Tx) (stores.Created, error),
) (stores.Created, bool) {
	t.Helper()
	var created stores.Created
	res, err := w.idem.Run(context.Background(), idempotency.Request{
		Scope: model.IdempotencyScope{WorkspaceID: w.p.WorkspaceID, UserID: w.p.UserID, Method: "POST", Path: path, Key: key},
		Shape: idempotency.RequestShape{Method: "POST", Path: path, ContentType: "application/json", Body: []byte(body)},
	}, func(ctx context.Context, tx ports.Tx) (model.SavedResponse, error) {
		var err error
		created, err = start(ctx, tx)
		return model.SavedResponse{Status: 201, Body: []byte(`{}`)}, err
	})
	require.NoError(t, err)
	return created, res.Replayed
}

func (w *tokenWorld) create(t *testing.T, key uuid.UUID, shop, apiKey string) stores.Created {
	t.Helper()
	c, replayed := w.request(t, "/v1/stores", key, `{"shop":"`+shop+`","api_key":"`+apiKey+`"}`,
		func(ctx context.Context, tx ports.Tx) (stores.Created, error) {
			return w.stores.Create(ctx, tx, w.p, stores.CreateCommand{
				Platform: "shopify", Name: "Shop", ExternalShopID: shop,
				Credentials: model.StoreCredentials{APIKey: apiKey, APISecret: secret},
			})
		})
	require.False(t, replayed)
	return c
}

func (w *tokenWorld) replace(t *testing.T, key uuid.UUID, store uuid.UUID, apiKey string) stores.Created {
	t.Helper()
	c, replayed := w.request(t, "/v1/stores/"+store.String()+"/authorization", key, `{"api_key":"`+apiKey+`"}`,
		func(ctx context.Context, tx ports.Tx) (stores.Created, error) {
			return w.stores.ReplaceAuthorization(ctx, tx, w.p, store, model.StoreCredentials{APIKey: apiKey, APISecret: secret})
		})
	require.False(t, replayed)
	return c
}

// verify runs the job of op's verification and returns its request
// token.
func (w *tokenWorld) verify(t *testing.T, op model.Operation) string {
	t.Helper()
	var events []model.OutboxEvent
	require.NoError(t, w.Transact(context.Background(), w.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		events, err = tx.Outbox().List(ctx, model.OutboxPending, 100)
		return err
	}))
	for _, e := range events {
		var job model.StoreCredentialsVerify
		require.NoError(t, json.Unmarshal(e.Payload, &job))
		if job.OperationID != op.ID {
			continue
		}
		require.NoError(t, w.handler.Handle(context.Background(), ports.MessageOf(e)))
		require.NotEmpty(t, job.RequestToken, "a job started by an idempotent request carries its token")
		return job.RequestToken
	}
	t.Fatalf("no verify event for operation %s", op.ID)
	return ""
}

func (w *tokenWorld) store(t *testing.T, id uuid.UUID) model.Store {
	t.Helper()
	var s model.Store
	require.NoError(t, w.Transact(context.Background(), w.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		s, err = tx.Stores().Get(ctx, id)
		return err
	}))
	return s
}

// A create acknowledged, verified on the platform, then lost in a failover
// (the standby never received its commit): the client's retry with the
// same key executes again, with new row ids, and its verification carries
// the same token, so the platform answers with its first verdict and acts
// once.
func TestCreateExecutedAgainAfterALostCommitIsTheSameCallOnThePlatform(t *testing.T) {
	w := newTokenWorld(t)
	key := uuid.New()
	first := w.create(t, key, "shop-lost", "ak_good")
	token := w.verify(t, first.Operation)
	require.Equal(t, 1, w.sim.EffectCount())

	w.failover()
	again := w.create(t, key, "shop-lost", "ak_good")
	assert.NotEqual(t, first.Store.ID, again.Store.ID, "executed again, with new rows")
	assert.Equal(t, token, w.verify(t, again.Operation), "the same call to the platform")
	assert.Equal(t, 1, w.sim.EffectCount(), "the platform acted once")
	calls := w.sim.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[1].Replayed, "answered with the first verdict")
	assert.Equal(t, model.StoreVerified, w.store(t, again.Store.ID).Status)
}

// Another request is another call: a replaced authorization (a new key)
// is verified anew and never answered with the verdict of the credentials
// it replaced, and the same key used on another store's path is another
// call too.
func TestReplacedAuthorizationIsVerifiedAnew(t *testing.T) {
	w := newTokenWorld(t)
	created := w.create(t, uuid.New(), "shop-replaced", "ak_good")
	createToken := w.verify(t, created.Operation)
	require.Equal(t, model.StoreVerified, w.store(t, created.Store.ID).Status)

	key := uuid.New()
	replaced := w.replace(t, key, created.Store.ID, platformsim.InvalidAPIKey)
	replaceToken := w.verify(t, replaced.Operation)
	assert.NotEqual(t, createToken, replaceToken)
	assert.Equal(t, model.StoreVerificationFailed, w.store(t, created.Store.ID).Status, "the new, invalid key decides")
	assert.Equal(t, 2, w.sim.EffectCount())

	other := w.create(t, uuid.New(), "shop-other", "ak_good")
	w.verify(t, other.Operation)
	otherReplaced := w.replace(t, key, other.Store.ID, "ak_good_2")
	assert.NotEqual(t, replaceToken, w.verify(t, otherReplaced.Operation), "the same key on another path is another call")
	assert.Equal(t, 4, w.sim.EffectCount())
	assert.Equal(t, model.StoreVerified, w.store(t, other.Store.ID).Status)
}

// A verification started outside an idempotent request (no scope in its
// context) keeps the token it always had: its operation id.
func TestJobWithoutARequestFallsBackToItsOperation(t *testing.T) {
	h := newHarness(t)
	store, op, msg := h.connect(t, "ak_good")
	var job model.StoreCredentialsVerify
	require.NoError(t, json.Unmarshal(msg.Payload, &job))
	assert.Empty(t, job.RequestToken)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.sim.Effects(op.ID.String()))
	s, _ := h.state(t, store.ID, op.ID)
	assert.Equal(t, model.StoreVerified, s.Status)
}
