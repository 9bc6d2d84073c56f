package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

func TestStartSyncWritesSyncOperationAndEvent(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	cs, op, msg := h.start(t, store.ID)
	assert.Equal(t, model.TaskPending, cs.Status)
	assert.Equal(t, store.ID, cs.StoreID)
	assert.Equal(t, op.ID, cs.OperationID)
	assert.Equal(t, h.p.WorkspaceID, cs.WorkspaceID)

	assert.Equal(t, model.OperationCatalogSync, op.Kind)
	assert.Equal(t, model.OperationPending, op.Status)
	assert.Equal(t, "catalog_sync", op.ResourceType)
	assert.Equal(t, cs.ID, op.ResourceID)
	assert.Equal(t, h.p.UserID, op.CreatedBy)

	var payload model.CatalogSyncRun
	require.NoError(t, json.Unmarshal(msg.Payload, &payload))
	assert.Equal(t, model.CatalogSyncRun{SyncID: cs.ID, JobOperation: model.JobOperation{OperationID: op.ID}}, payload)
	assert.Equal(t, "shopify/"+store.ExternalShopID, msg.Destination, "the store's platform, for its shop")
	assert.Equal(t, "catalog/"+store.ID.String(), msg.OrderingKey, "a store's syncs run in order")

	got, err := h.svc.Get(context.Background(), h.p, cs.ID)
	require.NoError(t, err)
	assert.Equal(t, cs.ID, got.ID)
	_, err = h.svc.Get(context.Background(), h.p, uuid.New())
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
}

func TestStartSyncNeedsAVerifiedStore(t *testing.T) {
	h := newHarness(t)
	_, _, err := h.tryStart(h.store(t, false).ID)
	assert.True(t, domain.IsCode(err, domain.CodeInvalidState), "got %v", err)
	assert.Contains(t, err.Error(), "verify the store first")
	_, _, err = h.tryStart(uuid.New())
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
}

// One active sync per store: a second is refused naming the first, and
// allowed again once the first finished.
func TestSecondActiveSyncIsRefusedUntilTheFirstFinished(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	first, _, msg := h.start(t, store.ID)

	_, _, err := h.tryStart(store.ID)
	assert.True(t, domain.IsCode(err, domain.CodeSyncAlreadyActive), "got %v", err)
	var de *domain.Error
	require.True(t, errors.As(err, &de))
	assert.Equal(t, first.ID.String(), de.ResourceID)

	// Another store has its own slot.
	_, _, err = h.tryStart(h.store(t, true).ID)
	require.NoError(t, err)

	// Still refused while the first runs (its answer was lost).
	h.sim.FailNext(1, nil)
	require.Error(t, h.handler.Handle(context.Background(), msg))
	_, _, err = h.tryStart(store.ID)
	assert.True(t, domain.IsCode(err, domain.CodeSyncAlreadyActive), "got %v", err)

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	second, _, _ := h.start(t, store.ID)
	assert.NotEqual(t, first.ID, second.ID)
}

// A failed sync frees the slot too.
func TestAFailedSyncAllowsANewOne(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	first, _, msg := h.start(t, store.ID)
	h.sim.FailNext(1, domain.Errorf(domain.CodeForbidden, "scope read_products missing"))
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	cs, _ := h.state(t, first.ID, first.OperationID)
	require.Equal(t, model.TaskFailed, cs.Status)
	_, _, err := h.tryStart(store.ID)
	assert.NoError(t, err)
}
