package limits_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/testkit"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// store answers as told: a decision, or an error (an unreachable Redis).
type store struct {
	mu       sync.Mutex
	decision model.RateDecision
	err      error
	asked    int
}

func (s *store) Take(context.Context, uuid.UUID, model.Rate) (model.RateDecision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	return s.decision, s.err
}

func (s *store) set(d model.RateDecision, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decision, s.err = d, err
}

type observed struct {
	mu sync.Mutex
	n  map[[2]string]int
}

func (o *observed) ObserveLimit(policy, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[[2]string{policy, outcome}]++
}

func (o *observed) count(policy, outcome string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[[2]string{policy, outcome}]
}

func newLimits(t *testing.T, rate string, maxConcurrent int, s *store, c *clock, logs *testkit.LogBuffer) (*limits.Limits, *observed) {
	t.Helper()
	return newLimitsOf(t, rate, limits.Config{MaxConcurrent: maxConcurrent}, s, c, logs)
}

// newLimitsOf is newLimits with cfg's cap and wait.
func newLimitsOf(t *testing.T, rate string, cfg limits.Config, s *store, c *clock, logs *testkit.LogBuffer) (*limits.Limits, *observed) {
	t.Helper()
	p, err := limits.ParsePolicy(rate, "")
	require.NoError(t, err)
	cfg.Policy = p
	obs := &observed{n: map[[2]string]int{}}
	return limits.New(cfg, s, c, obs, slog.New(slog.NewTextHandler(logs, nil))), obs
}

func TestSpendRefusesWhatTheStoreRefusesWithTheRateAndRetryAfter(t *testing.T) {
	s := &store{decision: model.RateDecision{RetryAfter: 1500 * time.Millisecond}}
	l, obs := newLimits(t, "20/s:40", 0, s, &clock{}, &testkit.LogBuffer{})
	err := l.Spend(context.Background(), uuid.New())
	require.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 1500*time.Millisecond, de.RetryAfter)
	var r *limits.Refusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, limits.Refusal{Policy: limits.PolicyWrites, Quota: 20, Window: time.Second, Burst: 40, RetryAfter: 1500 * time.Millisecond}, *r)
	assert.Equal(t, 1, obs.count(limits.PolicyWrites, limits.OutcomeLimited))

	s.set(model.RateDecision{Allowed: true}, nil)
	require.NoError(t, l.Spend(context.Background(), uuid.New()))
	assert.Equal(t, 1, obs.count(limits.PolicyWrites, limits.OutcomeAllowed))
}

func TestAnUnlimitedWorkspaceNeverAsksTheStore(t *testing.T) {
	s := &store{err: errors.New("must not be asked")}
	l, _ := newLimits(t, "off", 0, s, &clock{}, &testkit.LogBuffer{})
	require.NoError(t, l.Spend(context.Background(), uuid.New()))
	assert.Zero(t, s.asked)
	var none *limits.Limits
	require.NoError(t, none.Spend(context.Background(), uuid.New()), "nil Limits limit nothing")
	leave, err := none.Enter(context.Background(), uuid.New())
	require.NoError(t, err)
	leave()
}

// A store that cannot be asked lets writes through, says so once, is not
// asked again until the pause is over, and is trusted again once it
// answers.
func TestAStoreThatFailsLetsWritesThroughUnmeteredAndIsLeftAloneForAWhile(t *testing.T) {
	s := &store{err: errors.New("dial tcp: connection refused")}
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	logs := &testkit.LogBuffer{}
	l, obs := newLimits(t, "1/s", 0, s, c, logs)
	ws := uuid.New()

	for range 5 {
		require.NoError(t, l.Spend(context.Background(), ws))
	}
	assert.Equal(t, 1, s.asked, "asked once, then paused")
	assert.Equal(t, 5, obs.count(limits.PolicyWrites, limits.OutcomeUnmetered))
	assert.Equal(t, 1, strings.Count(logs.String(), "rate limiter unavailable"), logs.String())

	c.advance(limits.DefaultPause)
	require.NoError(t, l.Spend(context.Background(), ws))
	assert.Equal(t, 2, s.asked, "asked again after the pause")
	assert.Equal(t, 1, strings.Count(logs.String(), "rate limiter unavailable"), "one line per outage")

	c.advance(limits.DefaultPause)
	s.set(model.RateDecision{}, nil) // back, and the workspace is over its rate
	err := l.Spend(context.Background(), ws)
	assert.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	assert.Equal(t, 1, strings.Count(logs.String(), "rate limiter answers again"))
}

// The request's own end (a client gone) is not the store's failure: it
// does not pause the store.
func TestARequestThatEndsDoesNotPauseTheStore(t *testing.T) {
	s := &store{err: context.Canceled}
	l, _ := newLimits(t, "1/s", 0, s, &clock{}, &testkit.LogBuffer{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, l.Spend(ctx, uuid.New()))
	s.set(model.RateDecision{Allowed: true}, nil)
	require.NoError(t, l.Spend(context.Background(), uuid.New()))
	assert.Equal(t, 2, s.asked)
}

func TestEnterRefusesOverTheCapAndLeaveGivesTheSlotBackOnce(t *testing.T) {
	l, obs := newLimits(t, "off", 1, &store{}, &clock{}, &testkit.LogBuffer{})
	ws := uuid.New()
	leave, err := l.Enter(context.Background(), ws)
	require.NoError(t, err)
	_, err = l.Enter(context.Background(), ws)
	require.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	var r *limits.Refusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, limits.PolicyConcurrency, r.Policy)
	assert.Equal(t, 1, r.Quota)
	assert.Equal(t, limits.ConcurrencyRetryAfter, r.RetryAfter)
	_, err = l.Enter(context.Background(), uuid.New())
	require.NoError(t, err, "another workspace has its own slot")

	leave()
	leave() // a second call gives back nothing more
	assert.Zero(t, l.Admission().InFlight(ws))
	_, err = l.Enter(context.Background(), ws)
	require.NoError(t, err)
	assert.Equal(t, 1, obs.count(limits.PolicyConcurrency, limits.OutcomeLimited))
	assert.Equal(t, 3, obs.count(limits.PolicyConcurrency, limits.OutcomeAllowed))
}

// Over the cap a request waits for its turn and is admitted when a slot
// comes back; one whose wait runs out is refused like one over a full
// queue; one whose request ends while it waits is counted apart. Each is
// told apart in the observer.
func TestEnterWaitsItsTurnOverTheCapThenRefuses(t *testing.T) {
	l, obs := newLimitsOf(t, "off", limits.Config{MaxConcurrent: 1, QueueTimeout: time.Minute}, &store{}, &clock{}, &testkit.LogBuffer{})
	ws := uuid.New()
	leave, err := l.Enter(context.Background(), ws)
	require.NoError(t, err)

	next := make(chan func(), 1)
	go func() {
		leave, err := l.Enter(context.Background(), ws)
		assert.NoError(t, err)
		next <- leave
	}()
	require.Eventually(t, func() bool { return l.Admission().Waiting(ws) == 1 }, 30*time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	abandoned := make(chan error, 1)
	go func() {
		_, err := l.Enter(ctx, ws)
		abandoned <- err
	}()
	require.Eventually(t, func() bool { return l.Admission().Waiting(ws) == 2 }, 30*time.Second, time.Millisecond)
	cancel()
	err = <-abandoned
	assert.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	assert.Equal(t, 1, obs.count(limits.PolicyConcurrency, limits.OutcomeAbandoned))

	leave()
	(<-next)()
	assert.Zero(t, l.Admission().InFlight(ws))
	assert.Equal(t, 1, obs.count(limits.PolicyConcurrency, limits.OutcomeAllowed))
	assert.Equal(t, 1, obs.count(limits.PolicyConcurrency, limits.OutcomeWaited))
	assert.Zero(t, obs.count(limits.PolicyConcurrency, limits.OutcomeLimited))

	short, obs := newLimitsOf(t, "off", limits.Config{MaxConcurrent: 1, QueueTimeout: time.Millisecond}, &store{}, &clock{}, &testkit.LogBuffer{})
	leave, err = short.Enter(context.Background(), ws)
	require.NoError(t, err)
	_, err = short.Enter(context.Background(), ws) // the holder never leaves
	require.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	var r *limits.Refusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, limits.Refusal{Policy: limits.PolicyConcurrency, Quota: 1, RetryAfter: limits.ConcurrencyRetryAfter}, *r)
	assert.Equal(t, 1, obs.count(limits.PolicyConcurrency, limits.OutcomeLimited))
	leave()
	assert.Zero(t, short.Admission().InFlight(ws))
}
