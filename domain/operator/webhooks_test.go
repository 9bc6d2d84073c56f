package operator_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/testsupport/testkit"
)

// The operator sees, across workspaces, each endpoint with deliveries not
// done: its URL's host only, whether it is on, its counts and its last
// error; and re-drives an endpoint's dead letters as any dead letter.
func TestConsoleShowsWebhookDeliveriesPerEndpointAndRedrivesTheirDeadLetters(t *testing.T) {
	h := newHarness()
	a, b := uuid.New(), uuid.New()
	down := testkit.WebhookEndpoint(t, h.uow, a, "https://hooks.example.com:8443/in/tok_secret?key=sk_live_abc", true)
	off := testkit.WebhookEndpoint(t, h.uow, b, "https://other.example.org/hook", false)
	deleted := uuid.New()
	testkit.WebhookEndpoint(t, h.uow, a, "https://quiet.example.com/", true) // nothing to deliver

	dead := testkit.DeadDelivery(t, h.uow, a, down.ID, h.now.Add(-time.Hour), "job failed: webhook receiver refused the delivery with 410")
	testkit.PendingDelivery(t, h.uow, a, down.ID, h.now.Add(-30*time.Minute), h.now.Add(time.Minute))
	testkit.PendingDelivery(t, h.uow, a, down.ID, h.now.Add(-10*time.Minute), h.now.Add(5*time.Minute))
	testkit.PendingDelivery(t, h.uow, b, off.ID, h.now.Add(-time.Minute), h.now.Add(time.Hour))
	testkit.PendingDelivery(t, h.uow, b, deleted, h.now.Add(-2*time.Minute), h.now.Add(2*time.Hour))
	h.pending(t, b) // a job, not a delivery

	wh, err := h.console.Webhooks(t.Context())
	require.NoError(t, err)
	assert.False(t, wh.Truncated)
	assert.Equal(t, 4, wh.Waiting)
	assert.Equal(t, 1, wh.DeadLetter)
	require.Len(t, wh.Endpoints, 3)
	assert.Equal(t, operator.WebhookEndpoint{Workspace: a, Endpoint: down.ID, Host: "hooks.example.com:8443", Enabled: true,
		Waiting: 2, DeadLetter: 1, OldestWaiting: h.now.Add(-30 * time.Minute), NextAttempt: h.now.Add(time.Minute),
		LastError: "job failed: webhook receiver refused the delivery with 410"}, wh.Endpoints[0], "the most not done first")
	byEndpoint := map[uuid.UUID]operator.WebhookEndpoint{}
	for _, e := range wh.Endpoints[1:] {
		byEndpoint[e.Endpoint] = e
	}
	assert.Equal(t, "other.example.org", byEndpoint[off.ID].Host)
	assert.False(t, byEndpoint[off.ID].Enabled, "disabled")
	assert.True(t, byEndpoint[deleted].Deleted)
	assert.Empty(t, byEndpoint[deleted].Host)

	// The dead letter is among the others, grouped by its cause.
	dl, err := h.console.DeadLetters(t.Context())
	require.NoError(t, err)
	require.Len(t, dl.Groups, 1)
	assert.Equal(t, []string{model.EventWebhookDeliver}, dl.Groups[0].EventTypes)

	ids, n, err := h.console.RedriveWebhook(t.Context(), a, down.ID)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{dead.ID}, ids)
	assert.Equal(t, 1, n)
	wh, err = h.console.Webhooks(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 0, wh.DeadLetter)
	assert.Equal(t, 5, wh.Waiting, "re-driven: waiting again")
	_, _, err = h.console.RedriveWebhook(t.Context(), a, down.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "none left: %v", err)
	_, _, err = h.console.RedriveWebhook(t.Context(), b, down.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "read in its own workspace only: %v", err)
}

func TestURLHostKeepsNothingButTheHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@hooks.example.com/p/tok?secret=1#f": "hooks.example.com",
		"http://[2001:db8::1]:8080/x":                          "[2001:db8::1]:8080",
		"::not a url":                                          "",
	} {
		assert.Equal(t, want, operator.URLHost(in), in)
	}
}

// A workspace with more deliveries not done than one view reads is
// counted up to there, and the view says so.
func TestConsoleSaysWhenItDoesNotCountEveryDelivery(t *testing.T) {
	h := newHarness()
	ws := uuid.New()
	e := testkit.WebhookEndpoint(t, h.uow, ws, "https://hooks.example.com/", true)
	for range operator.MaxDeadLetters {
		testkit.PendingDelivery(t, h.uow, ws, e.ID, h.now, h.now)
	}
	wh, err := h.console.Webhooks(t.Context())
	require.NoError(t, err)
	assert.True(t, wh.Truncated)
	assert.Equal(t, operator.MaxDeadLetters, wh.Waiting)
}
