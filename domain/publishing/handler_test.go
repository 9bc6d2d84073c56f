package publishing_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/publishing"
)

// The same message delivered twice creates one listing.
func TestDuplicateDeliveryCreatesOneListing(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, op, msg := h.publish(t, product.ID, store.ID)

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	require.NoError(t, h.handler.Handle(context.Background(), msg))

	require.Equal(t, 1, h.sim.ListingCount())
	assert.Len(t, h.sim.Calls(), 1, "a finished publication is not sent to the platform again")
	l := h.sim.Listings()[0]
	assert.Equal(t, pub.ID.String(), l.Token, "the publication id is the request token")
	assert.Equal(t, store.ExternalShopID, l.ExternalShopID)
	assert.Equal(t, "Mug", l.Title)
	assert.Equal(t, int64(1999), l.PriceMinor)
	assert.Equal(t, platformsim.KeyHash("ak_good"), h.sim.Calls()[0].KeyHash, "the store's own credentials")

	p, o := h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, p.Status)
	assert.Equal(t, l.ID, p.ExternalListingID)
	assert.Empty(t, p.Reason)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Empty(t, o.Error)
}

func TestConcurrentDuplicatesCreateOneListing(t *testing.T) {
	h := newHarness(t, platformsim.WithLatency(5*time.Millisecond))
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, op, msg := h.publish(t, product.ID, store.ID)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { assert.NoError(t, h.handler.Handle(context.Background(), msg)) })
	}
	wg.Wait()
	assert.Equal(t, 1, h.sim.ListingCount())
	p, o := h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, p.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, h.sim.Listings()[0].ID, p.ExternalListingID)
}

// The platform created the listing but its answer was lost: redelivery
// records that listing without creating another.
func TestTimeoutAfterTheListingWasCreatedEndsWithOneListing(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, op, msg := h.publish(t, product.ID, store.ID)
	h.sim.FailAfterEffect(1)

	err := h.handler.Handle(context.Background(), msg)
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "redeliver: %v", err)
	p, o := h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskRunning, p.Status)
	assert.Equal(t, model.OperationRunning, o.Status)
	assert.Equal(t, 1, h.sim.ListingCount())

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.sim.ListingCount())
	assert.Equal(t, 1, h.sim.Effects(pub.ID.String()))
	p, o = h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, p.Status)
	assert.Equal(t, h.sim.Listings()[0].ID, p.ExternalListingID)
	assert.Equal(t, model.OperationSucceeded, o.Status)
}

// The worker died between CreateListing and recording it (the recording
// transaction never committed): redelivery still ends with one listing.
func TestCrashBeforeRecordingTheListingEndsWithOneListing(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, op, msg := h.publish(t, product.ID, store.ID)
	h.uow.CrashNext(2) // start, then the recording transaction

	err := h.handler.Handle(context.Background(), msg)
	require.Error(t, err)
	p, o := h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskRunning, p.Status)
	assert.Empty(t, p.ExternalListingID)
	assert.Equal(t, model.OperationRunning, o.Status)
	assert.Equal(t, 1, h.sim.ListingCount())

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.sim.ListingCount())
	calls := h.sim.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[0].Effect)
	assert.True(t, calls[1].Replayed)
	p, o = h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, p.Status)
	assert.Equal(t, h.sim.Listings()[0].ID, p.ExternalListingID)
	assert.Equal(t, model.OperationSucceeded, o.Status)
}

// An outage before the platform acted is retried.
func TestOutageBeforeThePlatformActedIsRetried(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, op, msg := h.publish(t, product.ID, store.ID)
	h.sim.FailNext(1, nil)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), msg), domain.CodeUnavailable))
	assert.Zero(t, h.sim.ListingCount())
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	p, o := h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, p.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, 1, h.sim.ListingCount())
}

// The draft moved on after publish was requested: the current draft is
// published, and the publication keeps the revision that was asked for.
func TestADraftThatMovedOnIsPublishedAsItIsNow(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, _, msg := h.publish(t, product.ID, store.ID)
	h.editProduct(t, product.ID, "Mug, blue")

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	require.Equal(t, 1, h.sim.ListingCount())
	assert.Equal(t, "Mug, blue", h.sim.Listings()[0].Title)
	p, _ := h.state(t, pub.ID, pub.OperationID)
	assert.Equal(t, model.TaskSucceeded, p.Status)
	assert.Equal(t, 1, p.ProductRevision)
}

// The platform created the listing from one revision, the answer was lost,
// the draft changed, and the retry sends other content under the same
// token: the platform refuses it naming the listing it created, which the
// worker records. Still one listing.
func TestADraftChangedBetweenAttemptsStillEndsWithOneListing(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, op, msg := h.publish(t, product.ID, store.ID)
	h.sim.FailAfterEffect(1)
	require.Error(t, h.handler.Handle(context.Background(), msg))
	h.editProduct(t, product.ID, "Mug, blue")

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.sim.ListingCount())
	p, o := h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, p.Status)
	assert.Equal(t, h.sim.Listings()[0].ID, p.ExternalListingID)
	assert.Equal(t, "Mug", h.sim.Listings()[0].Title, "the listing the first attempt created")
	assert.Equal(t, model.OperationSucceeded, o.Status)
}

// A permanent refusal fails the publication with a sanitized reason and is
// not retried.
func TestPermanentPlatformErrorFailsThePublication(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	pub, op, msg := h.publish(t, product.ID, store.ID)
	h.sim.FailNext(1, domain.Errorf(domain.CodeForbidden, "category needs approval; api_key=ak_good"))

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	p, o := h.state(t, pub.ID, op.ID)
	assert.Equal(t, model.TaskFailed, p.Status)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Contains(t, o.Error, publishing.ReasonPlatformRefused)
	assert.Contains(t, o.Error, "category needs approval")
	assert.NotContains(t, o.Error, "ak_good")
	assert.Equal(t, o.Error, p.Reason)
	assert.Zero(t, h.sim.ListingCount())

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Len(t, h.sim.Calls(), 1, "a failed publication is not retried")
}

func TestMessagesThatCanNeverSucceedArePermanentErrors(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	product := h.product(t, "Mug")
	_, _, msg := h.publish(t, product.ID, store.ID)

	bad := msg
	bad.Payload = []byte(`{"publication_id":`)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Type = model.EventCatalogSync
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Payload = []byte(`{"publication_id":"` + uuid.NewString() + `","product_revision":1,"operation_id":"` + uuid.NewString() + `"}`)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	bad = msg
	bad.WorkspaceID = uuid.New() // another workspace's outbox has no such event
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	assert.Empty(t, h.sim.Calls())
}
