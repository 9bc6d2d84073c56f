package idempotency_test

import (
	"context"
	"errors"
	"sync"
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

// countingUoW is the memory unit of work that counts the transactions it
// opens: a request answered in-process must not open one.
type countingUoW struct {
	ports.UnitOfWork
	transactions atomic.Int64
}

func (u *countingUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	u.transactions.Add(1)
	return u.UnitOfWork.Transact(ctx, ws, fn)
}

// inProcess wires the service to the memory store, with the completed cache
// holding up to cacheSize records (0: no cache).
func inProcess(t *testing.T, cacheSize int) (*idempotency.Service, *countingUoW) {
	t.Helper()
	uow := &countingUoW{UnitOfWork: memory.NewUnitOfWork(memory.NewDB())}
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	svc, err := idempotency.NewService(uow, fp, fixedClock{time.Unix(1_800_000_000, 0).UTC()}, idempotency.DefaultRetention,
		idempotency.WithCompletedCache(cacheSize, time.Hour))
	require.NoError(t, err)
	return svc, uow
}

func created(context.Context, ports.Tx) (model.SavedResponse, error) {
	return model.SavedResponse{Status: 201, Body: []byte(`{"id":"1"}`)}, nil
}

func TestTwinOfAnExecutingScopeGetsInProgressWithoutTouchingTheStore(t *testing.T) {
	svc, uow := inProcess(t, 100)
	req := request(`{"a":1}`)
	entered, finish := make(chan struct{}), make(chan struct{})
	leaderDone := make(chan error, 1)
	go func() {
		_, err := svc.Run(context.Background(), req, func(ctx context.Context, tx ports.Tx) (model.SavedResponse, error) {
			close(entered)
			<-finish
			return created(ctx, tx)
		})
		leaderDone <- err
	}()
	<-entered
	before := uow.transactions.Load()

	_, err := svc.Run(context.Background(), req, func(context.Context, ports.Tx) (model.SavedResponse, error) {
		t.Fatal("a twin ran the work")
		return model.SavedResponse{}, nil
	})
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, domain.CodeIdempotencyInProgress, de.Code)
	assert.Equal(t, idempotency.InProgressRetryAfter, de.RetryAfter)
	assert.Equal(t, before, uow.transactions.Load(), "the twin opened a transaction")

	// Another scope (another user, same key) is not held back by it.
	other := req
	other.Scope.UserID = uuid.New()
	_, err = svc.Run(context.Background(), other, created)
	require.NoError(t, err)

	close(finish)
	require.NoError(t, <-leaderDone)
}

func TestReplayOfACompletedScopeIsAnsweredFromTheCache(t *testing.T) {
	svc, uow := inProcess(t, 100)
	req := request(`{"a":1}`)
	first, err := svc.Run(context.Background(), req, created)
	require.NoError(t, err)
	require.False(t, first.Replayed)
	before := uow.transactions.Load()

	again, err := svc.Run(context.Background(), request2(req, `{ "a" : 1 }`), func(context.Context, ports.Tx) (model.SavedResponse, error) {
		t.Fatal("work ran again")
		return model.SavedResponse{}, nil
	})
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, first.Response, again.Response)

	_, err = svc.Run(context.Background(), request2(req, `{"a":2}`), created)
	assert.Equal(t, domain.CodeIdempotencyKeyReused, domain.ErrorCode(err))
	assert.Equal(t, before, uow.transactions.Load(), "a cached scope opened a transaction")
}

func TestRecordReadFromTheStoreFillsTheCache(t *testing.T) {
	db, fp, clock, req := completedElsewhere(t)

	uow := &countingUoW{UnitOfWork: memory.NewUnitOfWork(db)}
	here, err := idempotency.NewService(uow, fp, clock, idempotency.DefaultRetention, idempotency.WithCompletedCache(10, time.Hour))
	require.NoError(t, err)
	for range 3 {
		res, err := here.Run(context.Background(), req, created)
		require.NoError(t, err)
		assert.True(t, res.Replayed)
	}
	assert.Equal(t, int64(1), uow.transactions.Load(), "only the first replay reads the store")
}

func TestConcurrentReplaysShareOneRead(t *testing.T) {
	db, fp, clock, req := completedElsewhere(t)

	// The leader's transaction is held open until every twin has joined, so
	// all of them arrive while the read is in flight.
	const twins = 20
	release := make(chan struct{})
	var joined sync.WaitGroup
	joined.Add(twins)
	uow := &gatedUoW{countingUoW: countingUoW{UnitOfWork: memory.NewUnitOfWork(db)}, gate: release}
	here, err := idempotency.NewService(uow, fp, clock, idempotency.DefaultRetention)
	require.NoError(t, err)

	results := make(chan error, twins+1)
	go func() {
		res, err := here.Run(context.Background(), req, created)
		if err == nil && !res.Replayed {
			err = errors.New("the leader executed")
		}
		results <- err
	}()
	<-uow.entered()
	for range twins {
		go func() {
			joined.Done()
			res, err := here.Run(context.Background(), req, created)
			if err == nil && !res.Replayed {
				err = errors.New("a twin executed")
			}
			results <- err
		}()
	}
	joined.Wait()
	require.Eventually(t, func() bool { return idempotency.TwinsOf(here, req.Scope) == twins }, 10*time.Second, time.Millisecond)
	close(release)
	for range twins + 1 {
		require.NoError(t, <-results)
	}
	assert.Equal(t, int64(1), uow.transactions.Load(), "twins read the store themselves")
}

func TestRegistryIsReleasedAfterFailingOrPanickingWork(t *testing.T) {
	svc, _ := inProcess(t, 100)
	req := request(`{"a":1}`)

	_, err := svc.Run(context.Background(), req, func(context.Context, ports.Tx) (model.SavedResponse, error) {
		return model.SavedResponse{}, domain.Errorf(domain.CodeValidation, "no")
	})
	require.Equal(t, domain.CodeValidation, domain.ErrorCode(err))

	require.Panics(t, func() {
		_, _ = svc.Run(context.Background(), req, func(context.Context, ports.Tx) (model.SavedResponse, error) {
			panic("boom")
		})
	})

	// The scope is free again: the retry executes (not 409, not a replay).
	res, err := svc.Run(context.Background(), req, created)
	require.NoError(t, err)
	assert.False(t, res.Replayed)
}

func TestCompletedCacheIsBounded(t *testing.T) {
	svc, uow := inProcess(t, 2)
	reqs := []idempotency.Request{request(`{}`), request(`{}`), request(`{}`)}
	for _, r := range reqs {
		_, err := svc.Run(context.Background(), r, created)
		require.NoError(t, err)
	}
	before := uow.transactions.Load()
	// The two most recent are answered from memory ...
	for _, r := range reqs[1:] {
		res, err := svc.Run(context.Background(), r, created)
		require.NoError(t, err)
		assert.True(t, res.Replayed)
	}
	assert.Equal(t, before, uow.transactions.Load())
	// ... the oldest was evicted and is read from the store again.
	res, err := svc.Run(context.Background(), reqs[0], created)
	require.NoError(t, err)
	assert.True(t, res.Replayed)
	assert.Equal(t, before+1, uow.transactions.Load())
}

// completedElsewhere is a store where another process (no cache) executed
// req, with the fingerprinter and clock to build this process's service.
func completedElsewhere(t *testing.T) (*memory.DB, *idempotency.Fingerprinter, fixedClock, idempotency.Request) {
	t.Helper()
	db := memory.NewDB()
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	clock := fixedClock{time.Unix(1_800_000_000, 0).UTC()}
	elsewhere, err := idempotency.NewService(memory.NewUnitOfWork(db), fp, clock, idempotency.DefaultRetention)
	require.NoError(t, err)
	req := request(`{"a":1}`)
	_, err = elsewhere.Run(context.Background(), req, created)
	require.NoError(t, err)
	return db, fp, clock, req
}

// request2 is req's scope with another body.
func request2(req idempotency.Request, body string) idempotency.Request {
	req.Shape.Body = []byte(body)
	return req
}

// gatedUoW holds its first transaction open, before fn runs, until gate
// closes.
type gatedUoW struct {
	countingUoW
	gate  chan struct{}
	once  sync.Once
	enter chan struct{}
	mu    sync.Mutex
}

func (u *gatedUoW) entered() chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.enter == nil {
		u.enter = make(chan struct{})
	}
	return u.enter
}

func (u *gatedUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	first := false
	u.once.Do(func() { first = true })
	return u.countingUoW.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		if first {
			close(u.entered())
			<-u.gate
		}
		return fn(ctx, tx)
	})
}

// unconfirmedUoW commits as the memory unit of work does, then reports
// the commit's outcome unknown while unconfirmed is set, as PostgreSQL's
// adapter does for a commit whose wait for the synchronous standby was
// cancelled.
type unconfirmedUoW struct {
	countingUoW
	unconfirmed atomic.Bool
}

func (u *unconfirmedUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	if err := u.countingUoW.Transact(ctx, ws, fn); err != nil || !u.unconfirmed.Load() {
		return err
	}
	return domain.Errorf(domain.CodeUnavailable, "outcome unknown")
}

// A record read in a transaction whose commit was not confirmed is not
// known to survive a failover: it is not answered, nor cached for the
// next retry, which asks the store again.
func TestARecordReadInAnUnconfirmedCommitIsNotCached(t *testing.T) {
	db := memory.NewDB()
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	clock := fixedClock{time.Unix(1_800_000_000, 0).UTC()}
	executed, err := idempotency.NewService(memory.NewUnitOfWork(db), fp, clock, idempotency.DefaultRetention)
	require.NoError(t, err)
	req := request(`{"a":1}`)
	_, err = executed.Run(context.Background(), req, created)
	require.NoError(t, err)

	// Another process replays it.
	uow := &unconfirmedUoW{countingUoW: countingUoW{UnitOfWork: memory.NewUnitOfWork(db)}}
	svc, err := idempotency.NewService(uow, fp, clock, idempotency.DefaultRetention, idempotency.WithCompletedCache(100, time.Hour))
	require.NoError(t, err)
	uow.unconfirmed.Store(true)
	_, err = svc.Run(context.Background(), req, created)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))

	uow.unconfirmed.Store(false)
	before := uow.transactions.Load()
	res, err := svc.Run(context.Background(), req, created)
	require.NoError(t, err)
	assert.True(t, res.Replayed)
	assert.Equal(t, before+1, uow.transactions.Load(), "the retry was answered from memory")
}
