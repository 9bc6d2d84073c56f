package idempotency_test

import (
	"context"
	"sync"
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

// admission records what the service asked, and refuses as told.
type admission struct {
	mu             sync.Mutex
	entered, spent int
	left           int
	refuseEnter    bool
	refuseSpend    bool
}

func (a *admission) Enter(context.Context, uuid.UUID) (func(), error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refuseEnter {
		return nil, domain.Errorf(domain.CodeRateLimited, "over the cap")
	}
	a.entered++
	return func() { a.mu.Lock(); a.left++; a.mu.Unlock() }, nil
}

func (a *admission) Spend(context.Context, uuid.UUID) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refuseSpend {
		return &domain.Error{Code: domain.CodeRateLimited, Message: "over the rate", RetryAfter: time.Second}
	}
	a.spent++
	return nil
}

func (a *admission) set(enter, spend bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refuseEnter, a.refuseSpend = enter, spend
}

func admitted(t *testing.T, cacheSize int) (*idempotency.Service, *countingUoW, *admission) {
	t.Helper()
	uow := &countingUoW{UnitOfWork: memory.NewUnitOfWork(memory.NewDB())}
	a := &admission{}
	svc, err := idempotency.NewService(uow, mustFingerprinter(t), fixedClock{time.Unix(1_800_000_000, 0).UTC()}, idempotency.DefaultRetention,
		idempotency.WithCompletedCache(cacheSize, time.Hour), idempotency.WithAdmission(a))
	require.NoError(t, err)
	return svc, uow, a
}

// Only an execution is charged: a replay read from the database is
// admitted (it takes a connection) but spends nothing, and one answered
// from the cache asks nothing at all.
func TestOnlyAnExecutionSpendsAReplayNever(t *testing.T) {
	for _, cache := range []int{0, 100} {
		svc, _, a := admitted(t, cache)
		req := request(`{"a":1}`)
		for range 3 {
			_, err := svc.Run(context.Background(), req, created)
			require.NoError(t, err)
		}
		assert.Equal(t, 1, a.spent, "cache %d: the execution", cache)
		if cache == 0 {
			assert.Equal(t, 3, a.entered, "every request read the database")
		} else {
			assert.Equal(t, 1, a.entered, "the replays came from memory")
		}
		assert.Equal(t, a.entered, a.left, "every slot given back")
	}
}

// A refusal of the rate comes after the claim: it rolls back with the
// transaction, nothing ran, and the same key executes once the rate
// allows.
func TestARefusedRequestRunsNothingAndLeavesItsKeyFree(t *testing.T) {
	svc, _, a := admitted(t, 100)
	req := request(`{"a":1}`)
	a.set(false, true)
	ran := 0
	work := func(ctx context.Context, tx ports.Tx) (model.SavedResponse, error) {
		ran++
		return created(ctx, tx)
	}
	_, err := svc.Run(context.Background(), req, work)
	require.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	assert.Zero(t, ran)

	a.set(false, false)
	res, err := svc.Run(context.Background(), req, work)
	require.NoError(t, err)
	assert.False(t, res.Replayed, "the key was free: this is the execution")
	assert.Equal(t, 1, ran)
}

// Over the cap, the request is refused before any database work.
func TestARequestOverTheCapOpensNoTransaction(t *testing.T) {
	svc, uow, a := admitted(t, 100)
	a.set(true, false)
	_, err := svc.Run(context.Background(), request(`{"a":1}`), created)
	require.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	assert.Zero(t, uow.transactions.Load())
}

// A twin waiting on a leader that the rate refused is told the same, not
// "in progress": nothing runs.
func TestATwinOfARefusedLeaderIsRefusedToo(t *testing.T) {
	a := &admission{}
	a.set(false, true)
	// The leader waits in Enter until the twin has joined it.
	hold := &holdingAdmission{admission: a, entered: make(chan struct{}), release: make(chan struct{})}
	svc, err := idempotency.NewService(memory.NewUnitOfWork(memory.NewDB()), mustFingerprinter(t),
		fixedClock{time.Unix(1_800_000_000, 0).UTC()}, idempotency.DefaultRetention, idempotency.WithAdmission(hold))
	require.NoError(t, err)
	req := request(`{"a":1}`)
	leader := make(chan error, 1)
	go func() {
		_, err := svc.Run(context.Background(), req, created)
		leader <- err
	}()
	<-hold.entered
	twin := make(chan error, 1)
	go func() {
		_, err := svc.Run(context.Background(), req, created)
		twin <- err
	}()
	require.Eventually(t, func() bool { return idempotency.TwinsOf(svc, req.Scope) == 1 }, 10*time.Second, time.Millisecond)
	close(hold.release)
	assert.True(t, domain.IsCode(<-leader, domain.CodeRateLimited))
	err = <-twin
	assert.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
}

// holdingAdmission holds the first Enter until release.
type holdingAdmission struct {
	*admission
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *holdingAdmission) Enter(ctx context.Context, ws uuid.UUID) (func(), error) {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return h.admission.Enter(ctx, ws)
}

func mustFingerprinter(t *testing.T) *idempotency.Fingerprinter {
	t.Helper()
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	return fp
}
