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

type observed map[[2]string]int

func (o observed) ObserveLimit(policy, outcome string) { o[[2]string{policy, outcome}]++ }

func newLimits(t *testing.T, rate string, maxConcurrent int, s *store, c *clock, logs *testkit.LogBuffer) (*limits.Limits, observed) {
	t.Helper()
	p, err := limits.ParsePolicy(rate, "")
	require.NoError(t, err)
	obs := observed{}
	return limits.New(limits.Config{Policy: p, MaxConcurrent: maxConcurrent}, s, c, obs, slog.New(slog.NewTextHandler(logs, nil))), obs
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
	assert.Equal(t, 1, obs[[2]string{limits.PolicyWrites, limits.OutcomeLimited}])

	s.set(model.RateDecision{Allowed: true}, nil)
	require.NoError(t, l.Spend(context.Background(), uuid.New()))
	assert.Equal(t, 1, obs[[2]string{limits.PolicyWrites, limits.OutcomeAllowed}])
}

func TestAnUnlimitedWorkspaceNeverAsksTheStore(t *testing.T) {
	s := &store{err: errors.New("must not be asked")}
	l, _ := newLimits(t, "off", 0, s, &clock{}, &testkit.LogBuffer{})
	require.NoError(t, l.Spend(context.Background(), uuid.New()))
	assert.Zero(t, s.asked)
	var none *limits.Limits
	require.NoError(t, none.Spend(context.Background(), uuid.New()), "nil Limits limit nothing")
	leave, err := none.Enter(uuid.New())
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
	assert.Equal(t, 5, obs[[2]string{limits.PolicyWrites, limits.OutcomeUnmetered}])
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
	leave, err := l.Enter(ws)
	require.NoError(t, err)
	_, err = l.Enter(ws)
	require.True(t, domain.IsCode(err, domain.CodeRateLimited), "%v", err)
	var r *limits.Refusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, limits.PolicyConcurrency, r.Policy)
	assert.Equal(t, 1, r.Quota)
	assert.Equal(t, limits.ConcurrencyRetryAfter, r.RetryAfter)
	_, err = l.Enter(uuid.New())
	require.NoError(t, err, "another workspace has its own slot")

	leave()
	leave() // a second call gives back nothing more
	assert.Zero(t, l.Gate().InFlight(ws))
	_, err = l.Enter(ws)
	require.NoError(t, err)
	assert.Equal(t, 1, obs[[2]string{limits.PolicyConcurrency, limits.OutcomeLimited}])
	assert.Equal(t, 3, obs[[2]string{limits.PolicyConcurrency, limits.OutcomeAllowed}])
}
