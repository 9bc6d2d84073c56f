package queue

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// A destination's refusal that may be fixed (a webhook receiver's 404) is
// retried as the job's own failure: each run spends an attempt, and once
// they are spent the job is given up on, whatever the error's code. An
// outage, by contrast, spends none. The call was answered either way but
// for the outage.
func TestARefusalSpendsAttemptsWhereAnOutageSpendsNone(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := retryPolicy{maxAttempts: 2, fallback: time.Hour, initial: time.Second, maxInterval: 30 * time.Second, multiplier: 2}
	m := ports.Message{CreatedAt: now}
	refusal := platformerr.Refused(domain.Errorf(domain.CodeUnavailable, "webhook receiver refused the delivery with 404"))

	for attempts := 1; attempts <= 2; attempts++ {
		until, spent, wait, ok := p.next(m, classify(refusal), now)
		require.True(t, ok, "run %d is retried", attempts)
		require.Equal(t, attempts, spent)
		require.Equal(t, now.Add(time.Duration(1<<(attempts-1))*time.Second), until)
		require.Contains(t, wait.Reason, "404")
		require.Equal(t, model.JobWaitRetry, wait.Kind)
		m.Attempts = spent
	}
	_, _, _, ok := p.next(m, classify(refusal), now)
	require.False(t, ok, "given up once its attempts are spent")

	outage := platformerr.Upstream(domain.Errorf(domain.CodeUnavailable, "webhook receiver answered 503"))
	_, spent, _, ok := p.next(m, classify(outage), now)
	require.True(t, ok)
	require.Equal(t, m.Attempts, spent, "an outage spends no attempt")

	require.Equal(t, CallResult{}, CallResultOf(refusal), "the receiver answered")
	require.Equal(t, CallResult{Failed: true}, CallResultOf(outage))
	require.Equal(t, CallResult{Abandoned: true}, CallResultOf(errors.New("the database is down")))
}

// A job that only waits its turn (its destination's pace or cap, an
// operator's pause, an earlier job of its key) is not failed by its
// deadline: a paced backlog longer than the deadline waits. A wait for an
// outage still ends at the deadline, where the job is given up on.
func TestTheDeadlineFailsNoJobThatOnlyWaitedItsTurn(t *testing.T) {
	commit := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := retryPolicy{maxAttempts: 2, fallback: 6 * time.Hour, initial: time.Second, maxInterval: 30 * time.Second, multiplier: 2}
	m := ports.Message{CreatedAt: commit}
	now := commit.Add(7 * time.Hour) // past the deadline
	for _, kind := range []model.JobWaitKind{model.JobWaitPaced, model.JobWaitBusy, model.JobWaitPaused, model.JobWaitOrdering} {
		turn := now.Add(time.Minute)
		until, spent, wait, ok := p.next(m, classify(&waitFor{until: turn, wait: model.JobWait{Kind: kind, For: "shopify/shop-1", Reason: "its turn"}}), now)
		require.True(t, ok, "%s: a job waiting its turn past its deadline still waits", kind)
		require.Equal(t, turn, until, kind)
		require.Zero(t, spent, kind)
		require.Equal(t, kind, wait.Kind)
	}
	for _, kind := range []model.JobWaitKind{model.JobWaitOutage, model.JobWaitStateUnavailable} {
		_, _, _, ok := p.next(m, classify(&waitFor{until: now.Add(time.Minute), wait: model.JobWait{Kind: kind, For: "shopify", Reason: "down"}}), now)
		require.False(t, ok, "%s: an outage is waited out until the deadline, no longer", kind)
	}
}
