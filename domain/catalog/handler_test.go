package catalog_test

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
	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The same message twice reads the platform once and fills the catalogue
// once.
func TestDuplicateDeliverySyncsOnce(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	cs, op, msg := h.start(t, store.ID)

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	require.NoError(t, h.handler.Handle(context.Background(), msg))

	assert.Len(t, h.sim.Calls(), 1, "a finished sync is not run again")
	c := h.sim.Calls()[0]
	assert.Equal(t, platformsim.CallFetchCatalog, c.Kind)
	assert.Equal(t, store.ExternalShopID, c.ExternalShopID)
	assert.Equal(t, platformsim.KeyHash("ak_good"), c.KeyHash, "the store's own credentials")
	assert.Zero(t, h.sim.EffectCount())

	got, o := h.state(t, cs.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, got.Status)
	assert.Equal(t, platformsim.DefaultCatalogSize, got.ItemsSynced)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, platformsim.DefaultCatalogSize, h.count(t, store.ID))
}

func TestConcurrentDuplicatesSyncOnce(t *testing.T) {
	h := newHarness(t, platformsim.WithLatency(5*time.Millisecond))
	store := h.store(t, true)
	cs, op, msg := h.start(t, store.ID)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { assert.NoError(t, h.handler.Handle(context.Background(), msg)) })
	}
	wg.Wait()
	got, o := h.state(t, cs.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, got.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, platformsim.DefaultCatalogSize, h.count(t, store.ID))
}

// Syncing the same shop twice leaves the catalogue's size unchanged, and
// refreshes what changed on the platform.
func TestSyncTwiceLeavesTheCountUnchanged(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	_, _, msg := h.start(t, store.ID)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	require.Equal(t, platformsim.DefaultCatalogSize, h.count(t, store.ID))

	listings := platformsim.DefaultCatalog(store.ExternalShopID)
	listings[0].Title = "Renamed on the platform"
	h.sim.SetCatalog(store.ExternalShopID, listings)
	second, op, msg := h.start(t, store.ID)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	got, o := h.state(t, second.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, got.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, platformsim.DefaultCatalogSize, got.ItemsSynced)
	assert.Equal(t, platformsim.DefaultCatalogSize, h.count(t, store.ID))
}

// The platform answered but the answer was lost: redelivery reads again and
// ends with the same catalogue.
func TestTimeoutAfterTheReadIsRetried(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	cs, op, msg := h.start(t, store.ID)
	h.sim.FailAfterEffect(1)
	err := h.handler.Handle(context.Background(), msg)
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "redeliver: %v", err)
	got, o := h.state(t, cs.ID, op.ID)
	assert.Equal(t, model.TaskRunning, got.Status)
	assert.Equal(t, model.OperationRunning, o.Status)
	assert.Zero(t, h.count(t, store.ID))

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	got, o = h.state(t, cs.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, got.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, platformsim.DefaultCatalogSize, h.count(t, store.ID))
}

// The worker died while recording (the transaction never committed): the
// redelivery records the same catalogue, once.
func TestCrashWhileRecordingIsHarmless(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	cs, op, msg := h.start(t, store.ID)
	h.uow.CrashNext(2) // start, then the recording transaction

	require.Error(t, h.handler.Handle(context.Background(), msg))
	got, _ := h.state(t, cs.ID, op.ID)
	assert.Equal(t, model.TaskRunning, got.Status)
	assert.Zero(t, h.count(t, store.ID), "the upsert rolled back with the rest")

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	got, o := h.state(t, cs.ID, op.ID)
	assert.Equal(t, model.TaskSucceeded, got.Status)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Equal(t, platformsim.DefaultCatalogSize, got.ItemsSynced)
	assert.Equal(t, platformsim.DefaultCatalogSize, h.count(t, store.ID))
	assert.Len(t, h.sim.Calls(), 2)
}

// A listing reported twice is stored once and counted once.
func TestDuplicateListingsAreCountedOnce(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	h.sim.SetCatalog(store.ExternalShopID, []ports.CatalogListing{
		{ExternalID: "a", Title: "A", PriceMinor: 1, Currency: "EUR"},
		{ExternalID: "b", Title: "B", PriceMinor: 2, Currency: "EUR"},
		{ExternalID: "a", Title: "A again", PriceMinor: 3, Currency: "EUR"},
	})
	cs, op, msg := h.start(t, store.ID)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	got, _ := h.state(t, cs.ID, op.ID)
	assert.Equal(t, 2, got.ItemsSynced)
	assert.Equal(t, 2, h.count(t, store.ID))
}

func TestPermanentPlatformErrorFailsTheSync(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	cs, op, msg := h.start(t, store.ID)
	h.sim.FailNext(1, domain.Errorf(domain.CodeForbidden, "scope missing; token=abc123"))
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	got, o := h.state(t, cs.ID, op.ID)
	assert.Equal(t, model.TaskFailed, got.Status)
	assert.Equal(t, model.OperationFailed, o.Status)
	assert.Contains(t, o.Error, catalog.ReasonPlatformRefused)
	assert.Contains(t, o.Error, "scope missing")
	assert.NotContains(t, o.Error, "abc123")
	assert.Equal(t, o.Error, got.Reason)
	assert.Zero(t, h.count(t, store.ID))

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Len(t, h.sim.Calls(), 1, "a failed sync is not retried")
}

func TestMessagesThatCanNeverSucceedArePermanentErrors(t *testing.T) {
	h := newHarness(t)
	store := h.store(t, true)
	_, _, msg := h.start(t, store.ID)

	bad := msg
	bad.Payload = []byte(`{"sync_id":`)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Type = model.EventListingPublish
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Payload = []byte(`{"sync_id":"` + uuid.NewString() + `","operation_id":"` + uuid.NewString() + `"}`)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	bad = msg
	bad.WorkspaceID = uuid.New()
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	assert.Empty(t, h.sim.Calls())
}
