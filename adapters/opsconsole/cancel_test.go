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

// An operator cancels an operation from the console: the public API's
// use case, so a second cancel answers the same and a finished operation
// is 409 OPERATION_FINISHED, as problem+json; each call audited in one
// line.
func TestCancelAnOperation(t *testing.T) {
	f := start(t)
	ws := uuid.New()
	pending := testkit.Operation(t, f.uow, ws, uuid.New(), model.OperationPending, time.Now())
	done := testkit.Operation(t, f.uow, ws, uuid.New(), model.OperationSucceeded, time.Now())
	cancel := func(workspace, id uuid.UUID, headers map[string]string) *http.Response {
		return do(t, "POST", f.url+"/console/api/operations/"+workspace.String()+"/"+id.String()+"/cancel", strings.NewReader("{}"), headers)
	}
	bearer := map[string]string{"Authorization": "Bearer " + ciToken, "Content-Type": "application/json"}

	res := cancel(ws, pending.ID, map[string]string{"Content-Type": "application/json"})
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the operator token is required")
	cookie := f.login(t, token).Cookies()[0].String()
	res = cancel(ws, pending.ID, map[string]string{"Cookie": cookie, "Origin": "https://evil.example", "Content-Type": "application/json"})
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "another origin")

	for range 2 {
		res = cancel(ws, pending.ID, bearer)
		require.Equal(t, http.StatusOK, res.StatusCode)
		var op struct {
			ID     uuid.UUID `json:"id"`
			Status string    `json:"status"`
		}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&op))
		assert.Equal(t, pending.ID, op.ID)
		assert.Equal(t, "cancelled", op.Status, "cancel twice answers the same")
	}

	res = cancel(ws, done.ID, bearer)
	assert.Equal(t, http.StatusConflict, res.StatusCode)
	assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	assert.Contains(t, readBody(t, res), `"code":"OPERATION_FINISHED"`)
	res = cancel(uuid.New(), pending.ID, bearer)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "found in its own workspace only")
	res = do(t, "POST", f.url+"/console/api/operations/"+ws.String()+"/not-an-id/cancel", strings.NewReader("{}"), bearer)
	assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)

	res = do(t, "GET", f.url+"/console/api/operations/"+ws.String()+"/cancels", nil, map[string]string{"Cookie": cookie})
	require.Equal(t, http.StatusOK, res.StatusCode)
	var recent struct {
		Cancelled []struct {
			ID     uuid.UUID `json:"id"`
			Status string    `json:"status"`
		} `json:"cancelled"`
		Stopping []any `json:"stopping"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&recent))
	require.Len(t, recent.Cancelled, 1)
	assert.Equal(t, pending.ID, recent.Cancelled[0].ID)
	assert.Empty(t, recent.Stopping)
	lines := f.auditLines(t)
	assert.Equal(t, "view_cancels", lines[len(lines)-1]["action"])
	assert.Equal(t, ws.String(), lines[len(lines)-1]["workspace"])

	var cancels []map[string]any
	for _, l := range f.auditLines(t) {
		if l["action"] == "cancel" {
			cancels = append(cancels, l)
		}
	}
	require.Len(t, cancels, 5, "two cancels, a finished one, another workspace's, a bad id")
	assert.Equal(t, "ci", cancels[0]["operator"])
	assert.Equal(t, ws.String(), cancels[0]["workspace"])
	assert.Equal(t, pending.ID.String(), cancels[0]["operation"])
	assert.Equal(t, "cancelled", cancels[0]["status"])
	assert.Equal(t, "ok", cancels[0]["outcome"])
	assert.Equal(t, "failed", cancels[2]["outcome"])
	assert.Equal(t, "OPERATION_FINISHED", cancels[2]["code"])
}
