package opsconsole_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/testkit"
)

// The webhook deliveries not done are a view of the page, per endpoint:
// the URL's host only, never its path, query or the endpoint's secret; an
// endpoint's dead letters are re-driven from it, audited like any
// re-drive.
func TestWebhookDeliveriesPerEndpoint(t *testing.T) {
	f := start(t)
	ws := uuid.New()
	now := time.Now().UTC().Truncate(time.Second)
	e := testkit.WebhookEndpoint(t, f.uow, ws, "https://hooks.example.com/in/tok_0123456789?key=sk_live_abcdef", true)
	dead := testkit.DeadDelivery(t, f.uow, ws, e.ID, now.Add(-time.Hour), "job failed: webhook receiver refused the delivery with 410")
	testkit.PendingDelivery(t, f.uow, ws, e.ID, now.Add(-time.Minute), now.Add(time.Hour))

	for _, r := range []struct{ method, path string }{
		{"GET", "/console/api/webhooks"},
		{"POST", "/console/api/webhooks/" + ws.String() + "/" + e.ID.String() + "/redrive"},
	} {
		res := do(t, r.method, f.url+r.path, strings.NewReader("{}"), map[string]string{"Content-Type": "application/json"})
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, r.path)
	}

	cookie := f.login(t, token).Cookies()[0].String()
	page := readBody(t, do(t, "GET", f.url+"/console/", nil, map[string]string{"Cookie": cookie}))
	assert.Contains(t, page, `<a href="#webhooks-view">Webhook deliveries by endpoint</a>`)
	assert.Contains(t, page, `<section id="webhooks-view">`)

	res := do(t, "GET", f.url+"/console/api/webhooks", nil, map[string]string{"Cookie": cookie})
	require.Equal(t, http.StatusOK, res.StatusCode)
	body := readBody(t, res)
	for _, hidden := range []string{"tok_0123456789", "sk_live", "/in/", "not a real sealed secret", "secret"} {
		assert.NotContains(t, body, hidden, "only the URL's host is shown")
	}
	var view struct {
		Endpoints []struct {
			Workspace     uuid.UUID  `json:"workspace_id"`
			Endpoint      uuid.UUID  `json:"endpoint_id"`
			Host          string     `json:"host"`
			Enabled       bool       `json:"enabled"`
			Waiting       int        `json:"waiting"`
			DeadLetter    int        `json:"dead_letter"`
			OldestWaiting float64    `json:"oldest_waiting_age_seconds"`
			NextAttemptAt *time.Time `json:"next_attempt_at"`
			LastError     string     `json:"last_error"`
		} `json:"endpoints"`
		Waiting    int `json:"waiting"`
		DeadLetter int `json:"dead_letter"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &view))
	require.Len(t, view.Endpoints, 1)
	got := view.Endpoints[0]
	assert.Equal(t, ws, got.Workspace)
	assert.Equal(t, e.ID, got.Endpoint)
	assert.Equal(t, "hooks.example.com", got.Host)
	assert.True(t, got.Enabled)
	assert.Equal(t, 1, got.Waiting)
	assert.Equal(t, 1, got.DeadLetter)
	assert.Greater(t, got.OldestWaiting, 0.0)
	if assert.NotNil(t, got.NextAttemptAt) {
		assert.True(t, got.NextAttemptAt.Equal(now.Add(time.Hour)), "next attempt %s", got.NextAttemptAt)
	}
	assert.Equal(t, "job failed: webhook receiver refused the delivery with 410", got.LastError)
	lines := f.auditLines(t)
	last := lines[len(lines)-1]
	assert.Equal(t, "view_webhooks", last["action"])
	assert.Equal(t, 2.0, last["count"])

	res = do(t, "POST", f.url+"/console/api/webhooks/"+ws.String()+"/"+e.ID.String()+"/redrive", strings.NewReader("{}"),
		map[string]string{"Cookie": cookie, "Origin": f.url, "Content-Type": "application/json"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"redriven":1}`, readBody(t, res))
	assert.Equal(t, model.OutboxPending, f.eventStatus(t, ws, dead.ID))
	lines = f.auditLines(t)
	last = lines[len(lines)-1]
	assert.Equal(t, "redrive_webhook", last["action"])
	assert.Equal(t, "alice", last["operator"])
	assert.Equal(t, ws.String(), last["workspace"])
	assert.Equal(t, e.ID.String(), last["endpoint"])
	assert.Equal(t, []any{dead.ID.String()}, last["ids"])
	assert.Equal(t, 1.0, last["count"])
	assert.Equal(t, "ok", last["outcome"])
	assert.NotContains(t, f.logs.String(), "tok_0123456789", "nor in the log")
}
