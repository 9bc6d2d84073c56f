package stores_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/mocks"
	"github.com/oncehq/once/ports"
)

// storeTx is a Tx with the repositories a store's creation writes: any
// other is the nil embedded Tx, and using it fails the test. Create runs in
// the caller's transaction, so the service gets no unit of work.
type storeTx struct {
	ports.Tx
	stores     ports.StoreRepository
	operations ports.OperationRepository
	outbox     ports.Outbox
}

func (tx storeTx) Stores() ports.StoreRepository         { return tx.stores }
func (tx storeTx) Operations() ports.OperationRepository { return tx.operations }
func (tx storeTx) Outbox() ports.Outbox                  { return tx.outbox }

func sealer(t *testing.T) *aesgcm.Sealer {
	keys, err := aesgcm.ParseKeys("k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	require.NoError(t, err)
	s, err := aesgcm.NewSealer(keys)
	require.NoError(t, err)
	return s
}

// Creating a store appends exactly one verify event, for this store and
// credential version, and nothing of the credentials reaches it or the row.
func TestCreateAppendsOneVerifyEventWithoutCredentials(t *testing.T) {
	const secret = "sk_live_never_in_an_event"
	sl := sealer(t)
	var stored model.Store
	storeRepo := mocks.NewStoreRepository(t)
	storeRepo.EXPECT().Create(mock.Anything, mock.Anything).RunAndReturn(func(_ context.Context, s model.Store) error {
		stored = s
		return nil
	}).Once()
	opRepo := mocks.NewOperationRepository(t)
	opRepo.EXPECT().Create(mock.Anything, mock.Anything).Return(nil).Once()
	outbox := mocks.NewOutbox(t)
	var events []model.OutboxEvent
	outbox.EXPECT().Append(mock.Anything, mock.Anything).RunAndReturn(func(_ context.Context, evs ...model.OutboxEvent) error {
		events = append(events, evs...)
		return nil
	}).Once()
	tx := storeTx{stores: storeRepo, operations: opRepo, outbox: outbox}

	svc := stores.NewService(nil, sl, system.NewClock(), system.NewIDs())
	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin}
	created, err := svc.Create(context.Background(), tx, p, stores.CreateCommand{
		Platform: "shopify", Name: "Shop", ExternalShopID: "s-1",
		Credentials: model.StoreCredentials{APIKey: "ak", APISecret: secret},
	})
	require.NoError(t, err)

	require.Len(t, events, 1)
	ev := events[0]
	assert.Equal(t, model.EventStoreCredentialsVerify, ev.Type)
	assert.Equal(t, p.WorkspaceID, ev.WorkspaceID)
	assert.Equal(t, "shopify/s-1", ev.Destination, "the store's platform, for its shop")
	assert.Empty(t, ev.OrderingKey)
	var payload model.StoreCredentialsVerify
	require.NoError(t, json.Unmarshal(ev.Payload, &payload))
	assert.Equal(t, model.StoreCredentialsVerify{StoreID: created.Store.ID, CredentialVersion: 1, JobOperation: model.JobOperation{OperationID: created.Operation.ID}}, payload)
	assert.NotContains(t, string(ev.Payload), secret)

	assert.NotContains(t, string(stored.SealedCredentials), secret, "credentials are sealed at rest")
	opened, err := stores.OpenCredentials(sl, stored)
	require.NoError(t, err)
	assert.Equal(t, secret, opened.APISecret)

	// A ciphertext moved to another store does not open.
	moved := stored
	moved.ID = uuid.New()
	_, err = stores.OpenCredentials(sl, moved)
	assert.Error(t, err)
}

func TestCreateRefusesBadInputBeforeWriting(t *testing.T) {
	svc := stores.NewService(nil, sealer(t), system.NewClock(), system.NewIDs())
	tx := storeTx{} // no repositories: any write fails the test
	_, err := svc.Create(context.Background(), tx, model.Principal{WorkspaceID: uuid.New()}, stores.CreateCommand{
		Platform: "myspace", Name: "x", ExternalShopID: "y", Credentials: model.StoreCredentials{APIKey: "a", APISecret: "b"},
	})
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err))
}
