package publishing_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Publish records a pending publication of the current revision, its
// operation and one event that names them, in the caller's transaction.
func TestPublishWritesPublicationOperationAndEvent(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	product = h.editProduct(t, product.ID, "Mug, blue")

	pub, op, msg := h.publish(t, product.ID, store.ID)
	assert.Equal(t, model.TaskPending, pub.Status)
	assert.Equal(t, product.ID, pub.ProductID)
	assert.Equal(t, store.ID, pub.StoreID)
	assert.Equal(t, 2, pub.ProductRevision, "the product's current revision")
	assert.Equal(t, op.ID, pub.OperationID)
	assert.Equal(t, h.p.WorkspaceID, pub.WorkspaceID)

	assert.Equal(t, model.OperationListingPublish, op.Kind)
	assert.Equal(t, model.OperationPending, op.Status)
	assert.Equal(t, "publication", op.ResourceType)
	assert.Equal(t, pub.ID, op.ResourceID)
	assert.Equal(t, h.p.UserID, op.CreatedBy)

	var payload model.ListingPublish
	require.NoError(t, json.Unmarshal(msg.Payload, &payload))
	assert.Equal(t, model.ListingPublish{PublicationID: pub.ID, ProductRevision: 2, JobOperation: model.JobOperation{OperationID: op.ID}}, payload)
	assert.NotContains(t, string(msg.Payload), secret)
	assert.Equal(t, "shopify/"+store.ExternalShopID, msg.Destination, "the target store's platform, for its shop")
	assert.Equal(t, "publish/"+product.ID.String()+"/"+store.ID.String(), msg.OrderingKey,
		"one product's publications to one store run in order")

	got, err := h.svc.Get(context.Background(), h.p, pub.ID)
	require.NoError(t, err)
	assert.Equal(t, pub.ID, got.ID)
	assert.Equal(t, model.TaskPending, got.Status)
	_, err = h.svc.Get(context.Background(), h.p, uuid.New())
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
}

func TestPublishBeforeVerificationIsInvalidState(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, false)
	product := h.product(t, "Mug")
	_, _, err := h.tryPublish(product.ID, store.ID)
	assert.True(t, domain.IsCode(err, domain.CodeInvalidState), "got %v", err)
	assert.Contains(t, err.Error(), "verify the store first")
	assert.Empty(t, h.pendingEvents(t, model.EventListingPublish), "nothing was written")
}

func TestPublishOfAMissingProductOrStoreIsNotFound(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	_, _, err := h.tryPublish(uuid.New(), store.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
	_, _, err = h.tryPublish(product.ID, uuid.New())
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "got %v", err)
}

// A product is published to a store again while its first publication
// there is live: the second waits behind the first (same ordering key),
// and once both ran the shop holds one listing, with the second's content.
func TestSuccessivePublishesWaitInLineAndReplaceOneListing(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	first, _, firstMsg := h.publish(t, product.ID, store.ID)
	assert.Equal(t, uuid.Nil, first.WaitsBehind, "the first of its line")

	h.editProduct(t, product.ID, "Mug, blue")
	second, _, secondMsg := h.publish(t, product.ID, store.ID)
	assert.Equal(t, first.ID, second.WaitsBehind, "it waits behind the live one")
	assert.Equal(t, firstMsg.OrderingKey, secondMsg.OrderingKey, "the outbox runs them one after the other")
	third, _, _ := h.publish(t, product.ID, store.ID)
	assert.Equal(t, second.ID, third.WaitsBehind)

	require.NoError(t, h.handler.Handle(context.Background(), firstMsg))
	require.NoError(t, h.handler.Handle(context.Background(), secondMsg))
	one, _ := h.state(t, first.ID, first.OperationID)
	two, _ := h.state(t, second.ID, second.OperationID)
	require.Equal(t, model.TaskSucceeded, two.Status)
	assert.Equal(t, one.ExternalListingID, two.ExternalListingID, "one listing per product and shop")
	require.Equal(t, 1, h.sim.ListingCount())
	assert.Equal(t, "Mug, blue", h.sim.Listings()[0].Title, "the later publication's content")

	other := h.store(t, true)
	elsewhere, _, _ := h.publish(t, product.ID, other.ID)
	assert.Equal(t, uuid.Nil, elsewhere.WaitsBehind, "another store is another line")
}

// A failed publication does not block publishing again.
func TestPublishAgainAfterAFailure(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	first, _, msg := h.publish(t, product.ID, store.ID)
	h.sim.FailNext(1, domain.Errorf(domain.CodeForbidden, "listing quota exceeded"))
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	pub, _ := h.state(t, first.ID, first.OperationID)
	require.Equal(t, model.TaskFailed, pub.Status)

	second, _, msg := h.publish(t, product.ID, store.ID)
	assert.NotEqual(t, first.ID, second.ID)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	pub, _ = h.state(t, second.ID, second.OperationID)
	assert.Equal(t, model.TaskSucceeded, pub.Status)
	assert.Equal(t, 1, h.sim.ListingCount())
}

func (h *harness) pendingEvents(t *testing.T, eventType string) []model.OutboxEvent {
	t.Helper()
	var out []model.OutboxEvent
	h.tx(t, func(ctx context.Context, tx ports.Tx) error {
		evs, err := tx.Outbox().List(ctx, model.OutboxPending, 100)
		for _, e := range evs {
			if e.Type == eventType {
				out = append(out, e)
			}
		}
		return err
	})
	return out
}

// message returns the message of publication id's event.
func (h *harness) message(t *testing.T, id uuid.UUID) ports.Message {
	t.Helper()
	for _, e := range h.pendingEvents(t, model.EventListingPublish) {
		if e.AggregateID == id {
			return ports.MessageOf(e)
		}
	}
	t.Fatalf("no event for publication %s", id)
	return ports.Message{}
}
