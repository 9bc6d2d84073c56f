package stores_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

const newSecret = "sk_live_the_replacement"

type fixture struct {
	uow   ports.UnitOfWork
	svc   *stores.Service
	p     model.Principal
	store model.Store
	first model.Operation
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	uow := memory.NewUnitOfWork(memory.NewDB())
	f := fixture{
		uow: uow,
		svc: stores.NewService(uow, sealer(t), system.NewClock(), system.NewIDs()),
		p:   model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin},
	}
	require.NoError(t, uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		created, err := f.svc.Create(ctx, tx, f.p, stores.CreateCommand{
			Platform: "shopify", Name: "Shop", ExternalShopID: "s-1",
			Credentials: model.StoreCredentials{APIKey: "ak_old", APISecret: "sk_old"},
		})
		f.store, f.first = created.Store, created.Operation
		return err
	}))
	return f
}

// events returns the pending verify events of the fixture's store, oldest
// first.
func (f fixture) events(t *testing.T) []model.OutboxEvent {
	t.Helper()
	var out []model.OutboxEvent
	require.NoError(t, f.uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		evs, err := tx.Outbox().List(ctx, model.OutboxPending, 100)
		for _, e := range evs {
			if e.AggregateID == f.store.ID && e.Type == model.EventStoreCredentialsVerify {
				out = append(out, e)
			}
		}
		return err
	}))
	return out
}

func (f fixture) replace(t *testing.T, id uuid.UUID, creds model.StoreCredentials) (stores.Created, error) {
	t.Helper()
	var created stores.Created
	err := f.uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		created, err = f.svc.ReplaceAuthorization(ctx, tx, f.p, id, creds)
		return err
	})
	return created, err
}

// Replacing bumps the version, seals the new credentials under it, makes
// the store pending again, and starts one verification of the new version.
func TestReplaceAuthorizationBumpsTheVersionAndStartsItsVerification(t *testing.T) {
	f := newFixture(t)
	sl := sealer(t)
	// The store had been verified.
	require.NoError(t, f.uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		s, err := tx.Stores().Get(ctx, f.store.ID)
		if err != nil {
			return err
		}
		s.Status = model.StoreVerified
		return tx.Stores().Update(ctx, s)
	}))

	created, err := f.replace(t, f.store.ID, model.StoreCredentials{APIKey: "ak_new", APISecret: newSecret})
	require.NoError(t, err)

	stored, err := f.svc.Get(context.Background(), f.p, f.store.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, stored.CredentialVersion)
	assert.Equal(t, model.StorePendingVerification, stored.Status)
	assert.Equal(t, stored.CredentialVersion, created.Store.CredentialVersion)
	assert.NotContains(t, string(stored.SealedCredentials), newSecret)
	opened, err := stores.OpenCredentials(sl, stored)
	require.NoError(t, err)
	assert.Equal(t, model.StoreCredentials{APIKey: "ak_new", APISecret: newSecret}, opened)

	// The AAD binds the version: the new blob does not open as version 1,
	// and the old blob does not open as version 2.
	asV1 := stored
	asV1.CredentialVersion = 1
	_, err = stores.OpenCredentials(sl, asV1)
	assert.Error(t, err)
	oldAsV2 := f.store
	oldAsV2.CredentialVersion = 2
	_, err = stores.OpenCredentials(sl, oldAsV2)
	assert.Error(t, err)

	op := created.Operation
	assert.NotEqual(t, f.first.ID, op.ID)
	assert.Equal(t, model.OperationStoreVerify, op.Kind)
	assert.Equal(t, model.OperationPending, op.Status)
	assert.Equal(t, f.store.ID, op.ResourceID)
	assert.Equal(t, "store", op.ResourceType)
	assert.Equal(t, f.p.UserID, op.CreatedBy)

	evs := f.events(t)
	require.Len(t, evs, 2, "the create's event and the replace's")
	var payload model.StoreCredentialsVerify
	require.NoError(t, json.Unmarshal(evs[1].Payload, &payload))
	assert.Equal(t, model.StoreCredentialsVerify{StoreID: f.store.ID, CredentialVersion: 2, JobOperation: model.JobOperation{OperationID: op.ID}}, payload)
	for _, e := range evs {
		assert.NotContains(t, string(e.Payload), newSecret)
		assert.NotContains(t, string(e.Payload), "ak_new")
	}
}

func TestReplaceAuthorizationRefusesMissingStoreAndIncompleteCredentials(t *testing.T) {
	f := newFixture(t)
	_, err := f.replace(t, uuid.New(), model.StoreCredentials{APIKey: "ak", APISecret: newSecret})
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
	assert.NotContains(t, err.Error(), newSecret)

	_, err = f.replace(t, f.store.ID, model.StoreCredentials{APIKey: "ak_only"})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)
	assert.NotContains(t, err.Error(), "ak_only")

	// Another workspace cannot replace this store.
	other := f
	other.p.WorkspaceID = uuid.New()
	_, err = other.replace(t, f.store.ID, model.StoreCredentials{APIKey: "ak", APISecret: newSecret})
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)

	stored, err := f.svc.Get(context.Background(), f.p, f.store.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, stored.CredentialVersion)
	assert.Len(t, f.events(t), 1)
}

// Verify starts a new verification of the current version and leaves the
// store as it is.
func TestVerifyStartsAVerificationOfTheCurrentVersion(t *testing.T) {
	f := newFixture(t)
	var op model.Operation
	require.NoError(t, f.uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		op, err = f.svc.Verify(ctx, tx, f.p, f.store.ID)
		return err
	}))
	assert.NotEqual(t, f.first.ID, op.ID)
	assert.Equal(t, model.OperationStoreVerify, op.Kind)
	assert.Equal(t, model.OperationPending, op.Status)
	assert.Equal(t, f.store.ID, op.ResourceID)

	evs := f.events(t)
	require.Len(t, evs, 2)
	var payload model.StoreCredentialsVerify
	require.NoError(t, json.Unmarshal(evs[1].Payload, &payload))
	assert.Equal(t, model.StoreCredentialsVerify{StoreID: f.store.ID, CredentialVersion: 1, JobOperation: model.JobOperation{OperationID: op.ID}}, payload)

	stored, err := f.svc.Get(context.Background(), f.p, f.store.ID)
	require.NoError(t, err)
	assert.Equal(t, f.store.CredentialVersion, stored.CredentialVersion)
	assert.Equal(t, f.store.SealedCredentials, stored.SealedCredentials)

	err = f.uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		_, err := f.svc.Verify(ctx, tx, f.p, uuid.New())
		return err
	})
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
}

func TestRequireVerified(t *testing.T) {
	f := newFixture(t)
	check := func(id uuid.UUID) error {
		return f.uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			_, err := stores.RequireVerified(ctx, tx, id)
			return err
		})
	}
	err := check(f.store.ID)
	assert.True(t, domain.IsCode(err, domain.CodeInvalidState), "got %v", err)
	assert.Contains(t, err.Error(), "verify the store first")
	assert.True(t, domain.IsCode(check(uuid.New()), domain.CodeNotFound))

	require.NoError(t, f.uow.Transact(context.Background(), f.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		s, err := tx.Stores().Get(ctx, f.store.ID)
		if err != nil {
			return err
		}
		s.Status = model.StoreVerified
		return tx.Stores().Update(ctx, s)
	}))
	assert.NoError(t, check(f.store.ID))
}
