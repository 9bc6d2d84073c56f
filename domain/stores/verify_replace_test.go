package stores_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// replace replaces the store's authorization as the API does and returns
// the new operation and the message the Dispatcher would publish for it.
func (h *harness) replace(t *testing.T, storeID uuid.UUID, apiKey string) (stores.Created, ports.Message) {
	t.Helper()
	svc := stores.NewService(h.uow, h.sealer, system.NewClock(), system.NewIDs())
	p := model.Principal{WorkspaceID: h.ws, UserID: uuid.New(), Role: model.RoleAdmin}
	var created stores.Created
	var events []model.OutboxEvent
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if created, err = svc.ReplaceAuthorization(ctx, tx, p, storeID, model.StoreCredentials{APIKey: apiKey, APISecret: secret}); err != nil {
			return err
		}
		events, err = tx.Outbox().List(ctx, model.OutboxPending, 100)
		return err
	}))
	for _, e := range events {
		var job model.StoreCredentialsVerify
		require.NoError(t, json.Unmarshal(e.Payload, &job))
		if job.OperationID == created.Operation.ID {
			return created, ports.MessageOf(e)
		}
	}
	t.Fatal("no verify event for the replace's operation")
	return created, ports.Message{}
}

// The job written for the old credentials, delivered after the replace,
// does not call the platform and ends superseded; the new job verifies the
// new credentials.
func TestReplaceSupersedesTheOldJobAndVerifiesTheNewVersion(t *testing.T) {
	h := newHarness(t)
	store, oldOp, oldMsg := h.connect(t, "ak_old")
	created, newMsg := h.replace(t, store.ID, "ak_new")
	assert.Equal(t, 2, created.Store.CredentialVersion)

	require.NoError(t, h.handler.Handle(context.Background(), oldMsg))
	assert.Empty(t, h.sim.Calls(), "the old version is never sent to the platform")
	s, o := h.state(t, store.ID, oldOp.ID)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Equal(t, stores.ReasonSuperseded, o.Error)
	assert.Equal(t, model.StorePendingVerification, s.Status)

	require.NoError(t, h.handler.Handle(context.Background(), newMsg))
	require.Len(t, h.sim.Calls(), 1)
	c := h.sim.Calls()[0]
	assert.Equal(t, created.Operation.ID.String(), c.Token)
	assert.Equal(t, platformsim.KeyHash("ak_new"), c.KeyHash, "the new credentials, opened under version 2")
	s, o = h.state(t, store.ID, created.Operation.ID)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, model.StoreVerified, s.Status)
	assert.Equal(t, 2, s.CredentialVersion)

	// A late redelivery of either job changes nothing.
	require.NoError(t, h.handler.Handle(context.Background(), oldMsg))
	require.NoError(t, h.handler.Handle(context.Background(), newMsg))
	assert.Len(t, h.sim.Calls(), 1)
	assert.Equal(t, 1, h.sim.EffectCount())
}

// Replacing while the old verification is in flight (the platform acted,
// the answer was lost) discards the old verdict: the store's status comes
// from the new version only.
func TestReplaceDuringAnOldVerificationDiscardsItsVerdict(t *testing.T) {
	h := newHarness(t)
	store, oldOp, oldMsg := h.connect(t, "ak_old")
	h.sim.FailAfterEffect(1)
	require.Error(t, h.handler.Handle(context.Background(), oldMsg))

	created, newMsg := h.replace(t, store.ID, platformsim.InvalidAPIKey)
	require.NoError(t, h.handler.Handle(context.Background(), oldMsg))
	_, o := h.state(t, store.ID, oldOp.ID)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Equal(t, stores.ReasonSuperseded, o.Error)

	require.NoError(t, h.handler.Handle(context.Background(), newMsg))
	s, o := h.state(t, store.ID, created.Operation.ID)
	assert.Equal(t, model.StoreVerificationFailed, s.Status, "the new, invalid key decides")
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Equal(t, platformsim.RejectedReason, o.Error)
}
