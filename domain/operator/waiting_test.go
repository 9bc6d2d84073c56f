package operator_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/testsupport/testkit"
)

func (h harness) parked(t *testing.T, workspace uuid.UUID, destination string, in time.Duration, wait model.JobWait) model.OutboxEvent {
	return testkit.ParkedEvent(t, h.uow, workspace, h.now, destination, h.now.Add(in), wait)
}

var (
	shopDown   = model.JobWait{Kind: model.JobWaitOutage, For: "shopify/shop-1", Reason: "shopify/shop-1: breaker open"}
	aiPaced    = model.JobWait{Kind: model.JobWaitPaced, For: "ai/default", Reason: "ai/default: pace spent"}
	aiDown     = model.JobWait{Kind: model.JobWaitOutage, For: "ai/default", Reason: "ai/default: breaker open"}
	retryLater = model.JobWait{Kind: model.JobWaitRetry, Reason: "backoff after a transient failure"}
)

func TestConsoleGroupsParkedJobsByDestinationAcrossWorkspaces(t *testing.T) {
	h := newHarness()
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	h.parked(t, a, "shopify/shop-1", time.Hour, shopDown)
	h.parked(t, a, "shopify/shop-1", 3*time.Hour, shopDown)
	h.parked(t, a, "ai/default", 2*time.Hour, aiPaced)
	h.parked(t, b, "shopify/shop-1", 2*time.Hour, shopDown)
	h.parked(t, c, "", time.Minute, retryLater)
	// Pending, but not parked: the Dispatcher has yet to publish them.
	h.pending(t, b)
	h.pending(t, c)
	h.deadLetter(t, uuid.New(), "cannot publish: refused")

	w, err := h.console.Waiting(t.Context())
	require.NoError(t, err)
	assert.False(t, w.Truncated)
	assert.Equal(t, 5, w.Total)
	assert.Equal(t, []operator.WaitingDestination{
		{Destination: "shopify/shop-1", Jobs: 3, Workspaces: 2, EarliestDue: h.now.Add(time.Hour), LatestDue: h.now.Add(3 * time.Hour),
			Kind: model.JobWaitOutage, WaitedFor: "shopify/shop-1", Reason: "shopify/shop-1: breaker open"},
		{Destination: operator.NoDestination, Jobs: 1, Workspaces: 1, EarliestDue: h.now.Add(time.Minute), LatestDue: h.now.Add(time.Minute),
			Kind: model.JobWaitRetry, Reason: "backoff after a transient failure"},
		{Destination: "ai/default", Jobs: 1, Workspaces: 1, EarliestDue: h.now.Add(2 * time.Hour), LatestDue: h.now.Add(2 * time.Hour),
			Kind: model.JobWaitPaced, WaitedFor: "ai/default", Reason: "ai/default: pace spent"},
	}, w.Destinations)
}

func TestConsoleSaysWhenItDoesNotCountEveryParkedJob(t *testing.T) {
	h := newHarness()
	full, more := uuid.New(), uuid.New()
	for range dispatch.MaxAdminBatch {
		h.parked(t, full, "shopify/shop-1", time.Hour, shopDown)
	}
	w, err := h.console.Waiting(t.Context())
	require.NoError(t, err)
	assert.False(t, w.Truncated, "every one of them read")
	assert.Equal(t, dispatch.MaxAdminBatch, w.Total)

	h.parked(t, more, "ai/default", time.Hour, aiDown)
	h.parked(t, full, "shopify/shop-1", time.Hour, shopDown)
	w, err = h.console.Waiting(t.Context())
	require.NoError(t, err)
	assert.True(t, w.Truncated, "one workspace holds more than one view reads")
	assert.Equal(t, dispatch.MaxAdminBatch+1, w.Total)
}
