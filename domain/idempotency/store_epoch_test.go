package idempotency_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// failoverStore is a store that can be replaced under the service, as a
// failover to a standby replaces the primary: Transact runs on whichever
// database is current, and the epoch says how often it changed (bumped by
// the test, as the PostgreSQL adapter's ServerIdentity bumps it).
type failoverStore struct {
	current atomic.Pointer[memory.DB]
	epoch   atomic.Uint64
	works   atomic.Int64
	// unseen is a change of store only Confirm finds out (a pooler that
	// switched servers under connections that stay up); down makes
	// Confirm fail.
	unseen atomic.Bool
	down   atomic.Bool
}

func (f *failoverStore) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	return memory.NewUnitOfWork(f.current.Load()).Transact(ctx, ws, fn)
}

func (f *failoverStore) Epoch() uint64 { return f.epoch.Load() }

func (f *failoverStore) Confirm(context.Context) (uint64, error) {
	if f.down.Load() {
		return 0, domain.Errorf(domain.CodeUnavailable, "database unavailable, try again")
	}
	if f.unseen.Swap(false) {
		f.epoch.Add(1)
	}
	return f.Epoch(), nil
}

// work counts its executions.
func (f *failoverStore) work(ctx context.Context, tx ports.Tx) (model.SavedResponse, error) {
	f.works.Add(1)
	return created(ctx, tx)
}

// failoverService is a service with the completed cache on a failoverStore
// that starts on a fresh database.
func failoverService(t *testing.T, epoch bool) (*idempotency.Service, *failoverStore) {
	t.Helper()
	store := &failoverStore{}
	store.current.Store(memory.NewDB())
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	opts := []idempotency.Option{idempotency.WithCompletedCache(100, time.Hour)}
	if epoch {
		opts = append(opts, idempotency.WithStoreEpoch(store))
	}
	svc, err := idempotency.NewService(store, fp, fixedClock{time.Unix(1_800_000_000, 0).UTC()}, idempotency.DefaultRetention, opts...)
	require.NoError(t, err)
	return svc, store
}

// A request completed and cached, then the database is replaced by one
// that never received its commit (an asynchronous standby promoted): the
// retry is not answered from memory with a record the database no longer
// has; it executes again, on the new database, which then replays it.
func TestRetryAfterTheStoreChangedIsAnsweredByTheNewStore(t *testing.T) {
	svc, store := failoverService(t, true)
	req := request(`{"a":1}`)
	first, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	require.False(t, first.Replayed)
	cached, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	require.True(t, cached.Replayed, "answered from the cache before the failover")

	store.current.Store(memory.NewDB()) // the standby, without the record
	store.epoch.Add(1)

	again, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	assert.False(t, again.Replayed, "replayed a record the database no longer has")
	assert.Equal(t, int64(2), store.works.Load(), "the retry executes on the new database")

	replay, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	assert.True(t, replay.Replayed)
	assert.Equal(t, int64(2), store.works.Load())
}

// The control: without the epoch the cache cannot tell, and the retry is
// answered from memory though the database has no record. This is what
// the epoch is for, and shows the test above can fail.
func TestWithoutTheEpochTheCacheOutlivesTheStore(t *testing.T) {
	svc, store := failoverService(t, false)
	req := request(`{"a":1}`)
	_, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)

	store.current.Store(memory.NewDB())
	store.epoch.Add(1)

	again, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, int64(1), store.works.Load())
}

// A record written by a request that began before the epoch moved on is
// never answered from memory afterwards, even though it entered the cache
// after the change: it may come from the old database.
func TestRecordOfARequestThatSpannedTheChangeIsNotCached(t *testing.T) {
	svc, store := failoverService(t, true)
	req := request(`{"a":1}`)
	_, err := svc.Run(context.Background(), req, func(ctx context.Context, tx ports.Tx) (model.SavedResponse, error) {
		store.epoch.Add(1) // the change happens while the request runs
		return store.work(ctx, tx)
	})
	require.NoError(t, err)
	store.current.Store(memory.NewDB())

	again, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	assert.False(t, again.Replayed)
	assert.Equal(t, int64(2), store.works.Load())
}

// The store replaced in a way only Confirm finds out (behind a pooler in
// transaction mode): the cached record is not answered, the retry executes
// on the new store, which then replays it.
func TestAHitIsAnsweredOnlyOnceTheStoreConfirmedItsEpoch(t *testing.T) {
	svc, store := failoverService(t, true)
	req := request(`{"a":1}`)
	_, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)

	store.current.Store(memory.NewDB())
	store.unseen.Store(true)

	again, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	assert.False(t, again.Replayed, "replayed a record the database no longer has")
	assert.Equal(t, int64(2), store.works.Load())
	replay, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)
	assert.True(t, replay.Replayed)
	assert.Equal(t, int64(2), store.works.Load())
}

// A store that cannot confirm its epoch now answers nothing from memory:
// the client is told to come back, and nothing executes.
func TestAHitTheStoreCannotConfirmIsUnavailable(t *testing.T) {
	svc, store := failoverService(t, true)
	req := request(`{"a":1}`)
	_, err := svc.Run(context.Background(), req, store.work)
	require.NoError(t, err)

	store.down.Store(true)
	_, err = svc.Run(context.Background(), req, store.work)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	assert.Equal(t, int64(1), store.works.Load())
}

// countingEpoch is a store whose Confirm counts its calls and, until gate
// is closed, holds each in the store (a pooler's round trip that takes a
// while), recording how many ran at once.
type countingEpoch struct {
	*failoverStore
	gate    chan struct{}
	entered chan struct{}
	calls   atomic.Int64
	running atomic.Int64
	most    atomic.Int64
}

func (c *countingEpoch) Confirm(ctx context.Context) (uint64, error) {
	c.calls.Add(1)
	n := c.running.Add(1)
	defer c.running.Add(-1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	select {
	case c.entered <- struct{}{}:
	default:
	}
	<-c.gate
	return c.failoverStore.Confirm(ctx)
}

// A storm of retries of one completed request, all answered from the
// cache, costs the store one confirmation at a time, not one per request:
// the hits that arrive while a confirmation runs share the next one, which
// begins after they arrived (so none is answered by a confirmation older
// than itself). Here the first hit's confirmation is held until every
// other hit waits; they are then answered by one more, two in all.
func TestConcurrentHitsShareTheConfirmationOfTheEpoch(t *testing.T) {
	svc, store, req := countedService(t)
	const hits = 32
	results := make(chan error, hits)
	for range hits {
		go func() {
			res, err := svc.Run(context.Background(), req, store.work)
			if err == nil && !res.Replayed {
				err = assert.AnError
			}
			results <- err
		}()
	}
	<-store.entered
	require.Eventually(t, func() bool {
		return store.calls.Load() == hits || idempotency.ConfirmWaiters(svc) == hits-1
	}, time.Minute, time.Millisecond, "every hit arrived")
	close(store.gate)
	for range hits {
		require.NoError(t, <-results, "answered from memory")
	}
	assert.Equal(t, int64(2), store.calls.Load(), "confirmations for %d hits", hits)
	assert.Equal(t, int64(1), store.most.Load(), "confirmations at once")
	assert.Equal(t, int64(1), store.works.Load())
}

// A hit that gives up waiting for a shared confirmation (its client went
// away) is told the store is unavailable; the others it waited with are
// still answered.
func TestAHitThatGivesUpDoesNotFailTheOthers(t *testing.T) {
	svc, store, req := countedService(t)
	first := make(chan error, 1)
	go func() {
		_, err := svc.Run(context.Background(), req, store.work)
		first <- err
	}()
	<-store.entered
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp, stayed := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := svc.Run(ctx, req, store.work)
		gaveUp <- err
	}()
	go func() {
		res, err := svc.Run(context.Background(), req, store.work)
		if err == nil && !res.Replayed {
			err = assert.AnError
		}
		stayed <- err
	}()
	require.Eventually(t, func() bool { return idempotency.ConfirmWaiters(svc) == 2 }, time.Minute, time.Millisecond)
	cancel()
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(<-gaveUp))
	close(store.gate)
	require.NoError(t, <-first)
	require.NoError(t, <-stayed)
	assert.Equal(t, int64(2), store.calls.Load())
}

// countedService is a service with the completed cache on a countingEpoch
// whose confirmations are held until its gate closes, and req completed
// (and cached) on it.
func countedService(t *testing.T) (*idempotency.Service, *countingEpoch, idempotency.Request) {
	t.Helper()
	store := &countingEpoch{failoverStore: &failoverStore{}, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	store.current.Store(memory.NewDB())
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	svc, err := idempotency.NewService(store, fp, fixedClock{time.Unix(1_800_000_000, 0).UTC()}, idempotency.DefaultRetention,
		idempotency.WithCompletedCache(100, time.Hour), idempotency.WithStoreEpoch(store))
	require.NoError(t, err)
	req := request(`{"a":1}`)
	_, err = svc.Run(context.Background(), req, store.work) // a miss: no confirmation
	require.NoError(t, err)
	return svc, store, req
}
