package opsconsole_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/testkit"
)

// The waiting jobs are a view of the page, linked from its top, read from
// /console/api/waiting and audited like the others.
func TestWaitingJobsByDestination(t *testing.T) {
	f := start(t)
	a, b := uuid.New(), uuid.New()
	now := time.Now().UTC().Truncate(time.Second)
	down := model.JobWait{Kind: model.JobWaitOutage, For: "shopify", Reason: "waiting for shopify: breaker_open"}
	testkit.ParkedEvent(t, f.uow, a, now, "shopify/shop-1", now.Add(time.Hour), down)
	testkit.ParkedEvent(t, f.uow, b, now, "shopify/shop-1", now.Add(2*time.Hour), down)
	testkit.ParkedEvent(t, f.uow, b, now, "ai/default", now.Add(time.Minute),
		model.JobWait{Kind: model.JobWaitPaced, For: "ai/default", Reason: "waiting for ai/default: paced"})
	testkit.PendingEvent(t, f.uow, a, now)

	cookie := f.login(t, token).Cookies()[0].String()
	page := readBody(t, do(t, "GET", f.url+"/console/", nil, map[string]string{"Cookie": cookie}))
	assert.Contains(t, page, `<a href="#waiting-view">Waiting jobs by destination</a>`)
	assert.Contains(t, page, `<section id="waiting-view">`)
	assert.Contains(t, page, "GET /destinations", "it points to the workers' breakers")

	res := do(t, "GET", f.url+"/console/api/waiting", nil, map[string]string{"Cookie": cookie})
	require.Equal(t, http.StatusOK, res.StatusCode)
	var view struct {
		Destinations []struct {
			Destination string    `json:"destination"`
			Jobs        int       `json:"jobs"`
			Workspaces  int       `json:"workspaces"`
			EarliestDue time.Time `json:"earliest_due"`
			LatestDue   time.Time `json:"latest_due"`
			Kind        string    `json:"kind"`
			WaitedFor   string    `json:"waited_for"`
			Reason      string    `json:"reason"`
		} `json:"destinations"`
		Total     int  `json:"total"`
		Truncated bool `json:"truncated"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&view))
	assert.Equal(t, 3, view.Total, "the pending event that is not parked is not counted")
	assert.False(t, view.Truncated)
	require.Len(t, view.Destinations, 2)
	shop := view.Destinations[0]
	assert.Equal(t, "shopify/shop-1", shop.Destination)
	assert.Equal(t, 2, shop.Jobs)
	assert.Equal(t, 2, shop.Workspaces)
	assert.True(t, shop.EarliestDue.Equal(now.Add(time.Hour)), "earliest %s", shop.EarliestDue)
	assert.True(t, shop.LatestDue.Equal(now.Add(2*time.Hour)), "latest %s", shop.LatestDue)
	assert.Equal(t, "outage", shop.Kind)
	assert.Equal(t, "shopify", shop.WaitedFor, "the platform whose breaker is open")
	assert.Equal(t, "waiting for shopify: breaker_open", shop.Reason)
	assert.Equal(t, "ai/default", view.Destinations[1].Destination)

	lines := f.auditLines(t)
	last := lines[len(lines)-1]
	assert.Equal(t, "view_waiting", last["action"])
	assert.Equal(t, "alice", last["operator"])
	assert.Equal(t, 3.0, last["count"])
}
