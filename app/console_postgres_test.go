package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

// consoleCall calls the console's API on the ops listener with the
// operator token, and returns the status and the body.
func consoleCall(t *testing.T, s *apitest.Server, method, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.OpsURL+"/console/api/"+path, strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+consoleToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, body
}

// On PostgreSQL, under row-level security: the console counts a
// workspace's webhook deliveries per endpoint and shows the endpoint by
// its host; it cancels an operation as the public API does, and the
// cancel's end is pushed to the endpoint like any other, which the
// console then counts.
func TestConsoleOnPostgresShowsWebhookDeliveriesAndCancels(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.OperatorToken = consoleToken
	s := apitest.Start(t, cfg, db) // no Dispatcher, no worker: what is written stays
	hook := testkit.WebhookEndpoint(t, s.UoW, s.Workspace, "https://hooks.example.com/in?token=tok_0123456789", true)
	now := time.Now()
	testkit.DeadDelivery(t, s.UoW, s.Workspace, hook.ID, now, "job failed: webhook receiver refused the delivery with 400")
	testkit.PendingDelivery(t, s.UoW, s.Workspace, hook.ID, now, now.Add(time.Hour))

	type endpoints struct {
		Endpoints []struct {
			Endpoint   uuid.UUID `json:"endpoint_id"`
			Host       string    `json:"host"`
			Waiting    int       `json:"waiting"`
			DeadLetter int       `json:"dead_letter"`
			LastError  string    `json:"last_error"`
		} `json:"endpoints"`
	}
	view := func() endpoints {
		status, body := consoleCall(t, s, "GET", "webhooks")
		require.Equal(t, http.StatusOK, status, string(body))
		assert.NotContains(t, string(body), "tok_0123456789")
		var v endpoints
		require.NoError(t, json.Unmarshal(body, &v))
		return v
	}
	v := view()
	require.Len(t, v.Endpoints, 1)
	assert.Equal(t, hook.ID, v.Endpoints[0].Endpoint)
	assert.Equal(t, "hooks.example.com", v.Endpoints[0].Host)
	assert.Equal(t, 1, v.Endpoints[0].Waiting)
	assert.Equal(t, 1, v.Endpoints[0].DeadLetter)
	assert.Equal(t, "job failed: webhook receiver refused the delivery with 400", v.Endpoints[0].LastError)

	// A store verification waits in the outbox (no Dispatcher): cancelled
	// from the console, twice, then read through the public API.
	op := startTask(t, s, "/v1/stores", storeBody("console-cancel-"+uuid.NewString()[:8]))
	path := "operations/" + s.Workspace.String() + "/" + op.Operation.ID.String() + "/cancel"
	for range 2 {
		status, body := consoleCall(t, s, "POST", path)
		require.Equal(t, http.StatusOK, status, string(body))
		assert.Contains(t, string(body), `"status":"cancelled"`)
	}
	r := s.Do(t, "GET", "/v1/operations/"+op.Operation.ID.String(), nil, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	assert.Contains(t, string(r.Body), `"status":"cancelled"`)
	v = view()
	require.Len(t, v.Endpoints, 1)
	assert.Equal(t, 2, v.Endpoints[0].Waiting, "the cancel's end, pushed to the endpoint")

	// A finished operation is not cancelled.
	done := testkit.Operation(t, s.UoW, s.Workspace, s.User, model.OperationSucceeded, now)
	status, body := consoleCall(t, s, "POST", "operations/"+s.Workspace.String()+"/"+done.ID.String()+"/cancel")
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, string(body), `"code":"OPERATION_FINISHED"`)
	assert.Contains(t, s.Logs.String(), `"action":"cancel"`)
}
