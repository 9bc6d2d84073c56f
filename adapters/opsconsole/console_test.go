package opsconsole_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/opsconsole"
	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// token is alice's, ciToken the CI's: operators of their own.
const (
	token   = "operator-token-0123456789abcdef0123456789"
	ciToken = "ci-operator-token-0123456789abcdef01234567"
)

type fixture struct {
	url  string
	uow  ports.UnitOfWork
	logs *testkit.LogBuffer
}

func start(t *testing.T) fixture {
	t.Helper()
	db := memory.NewDB()
	uow := memory.NewUnitOfWork(db)
	clock := system.NewClock()
	console := operator.NewConsole(memory.NewOutboxDiscovery(db), dispatch.NewAdmin(uow, clock, nil, nil), uow, clock,
		jobs.NewFailures(uow, clock, nil))
	logs := &testkit.LogBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	// Served as the ops listener serves it: the API behind the operator
	// credential, every change refused from another origin.
	operators := opshttp.NewOperators()
	require.NoError(t, operators.AddEntries(opshttp.Entry("alice", token)+","+opshttp.Entry("ci", ciToken)))
	guard := opshttp.NewGuard(operators, memory.NewOperatorSessions(), clock)
	mux, err := opshttp.NewMux(opsconsole.Routes(console, guard, clock, log), guard)
	require.NoError(t, err)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return fixture{url: srv.URL, uow: uow, logs: logs}
}

// do sends a request without following redirects.
func do(t *testing.T, method, url string, body io.Reader, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

func readBody(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

// auditLines returns the audit lines logged so far.
func (f fixture) auditLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(f.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m["msg"] == "operator action" {
			out = append(out, m)
		}
	}
	return out
}

// eventStatus reads the status of the outbox event id of workspace.
func (f fixture) eventStatus(t *testing.T, workspace, id uuid.UUID) model.OutboxStatus {
	t.Helper()
	e, err := ports.Query(t.Context(), f.uow, workspace, func(ctx context.Context, tx ports.Tx) (model.OutboxEvent, error) {
		return tx.Outbox().Get(ctx, id)
	})
	require.NoError(t, err)
	return e.Status
}

// login types presented into the login form: the token names its
// operator.
func (f fixture) login(t *testing.T, presented string) *http.Response {
	t.Helper()
	form := url.Values{"token": {presented}}
	return do(t, "POST", f.url+"/console/login", strings.NewReader(form.Encode()), map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "Origin": f.url,
	})
}

func TestTheAPINeedsTheOperatorToken(t *testing.T) {
	f := start(t)
	for name, headers := range map[string]map[string]string{
		"none":          nil,
		"wrong":         {"Authorization": "Bearer " + strings.Repeat("x", len(token))},
		"not a bearer":  {"Authorization": "Basic " + token},
		"forged cookie": {"Cookie": "once_console=YWxpY2U.99999999999.AAAA"},
	} {
		res := do(t, "GET", f.url+"/console/api/backlog", nil, headers)
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, name)
		assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"), name)
		assert.Contains(t, readBody(t, res), `"code":"UNAUTHENTICATED"`, name)
	}

	// X-Operator names no one: the token does.
	res := do(t, "GET", f.url+"/console/api/backlog", nil, map[string]string{"Authorization": "Bearer " + ciToken, "X-Operator": "mallory"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	lines := f.auditLines(t)
	require.Len(t, lines, 1)
	assert.Equal(t, "ci", lines[0]["operator"])
	assert.Equal(t, "view_backlog", lines[0]["action"])
}

func TestTheLoginSetsAStrictHttpOnlySessionAndAWrongTokenIsRefused(t *testing.T) {
	f := start(t)
	res := f.login(t, "not the token")
	assert.Equal(t, http.StatusSeeOther, res.StatusCode)
	assert.Equal(t, "/console/?login=failed", res.Header.Get("Location"))
	assert.Empty(t, res.Cookies())

	page := readBody(t, do(t, "GET", f.url+"/console/", nil, nil))
	assert.Contains(t, page, `action="/console/login"`, "logged out: the login form")

	res = f.login(t, token)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Len(t, res.Cookies(), 1)
	c := res.Cookies()[0]
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Equal(t, "/console/", c.Path)
	assert.NotContains(t, c.Value, token)

	res = do(t, "GET", f.url+"/console/", nil, map[string]string{"Cookie": c.String()})
	assert.Contains(t, readBody(t, res), "Backlog per workspace", "logged in: the console")
	assert.Contains(t, res.Header.Get("Content-Security-Policy"), "script-src 'self'")

	cross := do(t, "POST", f.url+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"})
	assert.Equal(t, http.StatusForbidden, cross.StatusCode, "a login from another site")

	var actions []string
	for _, l := range f.auditLines(t) {
		actions = append(actions, l["action"].(string)+" "+l["outcome"].(string))
	}
	assert.Equal(t, []string{"login refused", "login ok"}, actions)
}

func TestARedriveThroughThePageMustBeASameOriginJSONRequest(t *testing.T) {
	f := start(t)
	ws := uuid.New()
	e := testkit.DeadLetter(t, f.uow, ws, time.Now(), "cannot publish: broker unreachable")
	cookie := f.login(t, token).Cookies()[0].String()
	redrive := f.url + "/console/api/dead-letters/" + ws.String() + "/" + e.ID.String() + "/redrive"

	res := do(t, "POST", redrive, strings.NewReader("x=1"), map[string]string{
		"Cookie": cookie, "Origin": f.url, "Content-Type": "application/x-www-form-urlencoded"})
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "a form post")
	res = do(t, "POST", redrive, strings.NewReader("{}"), map[string]string{
		"Cookie": cookie, "Origin": "https://evil.example", "Content-Type": "application/json"})
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "another origin")

	// Looked at, then re-driven: each audited.
	res = do(t, "GET", f.url+"/console/api/dead-letters/"+ws.String()+"/"+e.ID.String(), nil, map[string]string{"Cookie": cookie})
	require.Equal(t, http.StatusOK, res.StatusCode)
	var view map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&view))
	assert.Equal(t, "delivery", view["stage"])
	assert.Equal(t, "cannot publish: broker unreachable", view["last_error"])
	assert.Contains(t, view, "payload", "ids only, shown")
	other := do(t, "GET", f.url+"/console/api/dead-letters/"+uuid.NewString()+"/"+e.ID.String(), nil, map[string]string{"Cookie": cookie})
	assert.Equal(t, http.StatusNotFound, other.StatusCode, "read in its own workspace only")

	res = do(t, "POST", redrive, strings.NewReader("{}"), map[string]string{
		"Cookie": cookie, "Origin": f.url, "Content-Type": "application/json"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"redriven":1}`, readBody(t, res))
	assert.Equal(t, model.OutboxPending, f.eventStatus(t, ws, e.ID))

	var audited []map[string]any
	for _, l := range f.auditLines(t) {
		if l["action"] == "view" || l["action"] == "redrive" {
			audited = append(audited, l)
		}
	}
	require.Len(t, audited, 3, "view ok, view of another workspace refused, redrive ok")
	last := audited[2]
	assert.Equal(t, "alice", last["operator"])
	assert.Equal(t, ws.String(), last["workspace"])
	assert.Equal(t, []any{e.ID.String()}, last["ids"])
	assert.Equal(t, 1.0, last["count"])
	assert.Equal(t, "ok", last["outcome"])
}

func TestGroupRedriveAcrossWorkspaces(t *testing.T) {
	f := start(t)
	a, b := uuid.New(), uuid.New()
	testkit.DeadLetter(t, f.uow, a, time.Now(), "cannot publish: attempt 3 refused")
	testkit.DeadLetter(t, f.uow, b, time.Now(), "cannot publish: attempt 9 refused")
	bearer := map[string]string{"Authorization": "Bearer " + ciToken}

	res := do(t, "GET", f.url+"/console/api/dead-letters", nil, bearer)
	require.Equal(t, http.StatusOK, res.StatusCode)
	var list struct {
		Groups []struct {
			Key        string `json:"key"`
			Count      int    `json:"count"`
			Workspaces int    `json:"workspaces"`
		} `json:"groups"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	require.Len(t, list.Groups, 1)
	assert.Equal(t, 2, list.Groups[0].Count)
	assert.Equal(t, 2, list.Groups[0].Workspaces)

	body, _ := json.Marshal(map[string]string{"key": list.Groups[0].Key})
	res = do(t, "POST", f.url+"/console/api/groups/redrive", strings.NewReader(string(body)),
		map[string]string{"Authorization": "Bearer " + ciToken, "Content-Type": "application/json"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"redriven":2}`, readBody(t, res))
	lines := f.auditLines(t)
	last := lines[len(lines)-1]
	assert.Equal(t, "redrive_group", last["action"])
	assert.Equal(t, "ci", last["operator"])
	assert.ElementsMatch(t, []any{a.String(), b.String()}, last["workspace"])
	assert.Equal(t, 2.0, last["count"])
}

func TestTheConsoleIsOffWithoutAToken(t *testing.T) {
	srv := httptest.NewServer(opsconsole.Disabled())
	t.Cleanup(srv.Close)
	res := do(t, "GET", srv.URL+"/console/", nil, nil)
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Contains(t, readBody(t, res), "ONCE_OPERATOR_TOKEN")
}

// A dead letter tells the Dispatcher's delivery attempts from the worker's
// runs of its job: an event the broker refused has delivery attempts and
// no job attempts; one whose job the worker retried and gave up on was
// delivered at once and ran several times.
func TestDeadLettersTellDeliveryAttemptsFromJobAttempts(t *testing.T) {
	f := start(t)
	ws := uuid.New()
	refused := testkit.DeadLetter(t, f.uow, ws, time.Now(), "cannot publish: refused")
	job := testkit.PendingEvent(t, f.uow, ws, time.Now())
	require.NoError(t, f.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		_, err := tx.Outbox().DeadLetterJob(ctx, job.ID, 6, model.JobFailure(6, "platform unavailable"))
		return err
	}))

	res := do(t, "GET", f.url+"/console/api/dead-letters", nil, map[string]string{"Authorization": "Bearer " + ciToken})
	require.Equal(t, http.StatusOK, res.StatusCode)
	var list struct {
		Groups []struct {
			Events []struct {
				ID           uuid.UUID `json:"id"`
				AttemptCount int       `json:"attempt_count"`
				JobAttempts  *int      `json:"job_attempts"`
			} `json:"events"`
		} `json:"groups"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	seen := map[uuid.UUID]bool{}
	for _, g := range list.Groups {
		for _, e := range g.Events {
			seen[e.ID] = true
			switch e.ID {
			case refused.ID:
				assert.Equal(t, 1, e.AttemptCount, "the refused publish")
				assert.Nil(t, e.JobAttempts, "no job ran")
			case job.ID:
				assert.Equal(t, 0, e.AttemptCount, "delivered at the first attempt")
				if assert.NotNil(t, e.JobAttempts) {
					assert.Equal(t, 6, *e.JobAttempts, "the worker's first run and its five retries")
				}
			}
		}
	}
	assert.True(t, seen[refused.ID] && seen[job.ID], "both dead letters are listed")
}

// A dead letter of a job with an ordering key holds the key's later jobs
// until it is re-driven or released: its view says which key.
func TestADeadLetterShowsTheOrderingKeyItHolds(t *testing.T) {
	f := start(t)
	ws := uuid.New()
	at := time.Now()
	e := testkit.DeadLetter(t, f.uow, ws, at, "cannot publish: broker unreachable")
	keyed, err := model.NewOutboxEvent(uuid.New(), ws, e.Type, e.AggregateType, e.AggregateID, e.Payload, at)
	require.NoError(t, err)
	keyed.OrderingKey = "catalog/" + e.AggregateID.String()
	require.NoError(t, f.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Outbox().Append(ctx, keyed); err != nil {
			return err
		}
		_, err := tx.Outbox().DeadLetterJob(ctx, keyed.ID, 1, "gave up")
		return err
	}))
	cookie := f.login(t, token).Cookies()[0].String()
	view := func(id uuid.UUID) map[string]any {
		res := do(t, "GET", f.url+"/console/api/dead-letters/"+ws.String()+"/"+id.String(), nil, map[string]string{"Cookie": cookie})
		require.Equal(t, http.StatusOK, res.StatusCode)
		var v map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&v))
		return v
	}
	assert.Equal(t, keyed.OrderingKey, view(keyed.ID)["holds_ordering_key"])
	assert.NotContains(t, view(e.ID), "holds_ordering_key", "no key, nothing held")
}

// Releasing a dead letter from the console retires it (a job given up on
// is not run again) so the key it holds goes on; like a re-drive, only a
// same-origin JSON request does it, and it is audited.
func TestAReleaseRetiresADeadLetterOfAJobGivenUpOn(t *testing.T) {
	f := start(t)
	ws := uuid.New()
	at := time.Now()
	e := testkit.PendingEvent(t, f.uow, ws, at)
	require.NoError(t, f.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		_, err := tx.Outbox().DeadLetterJob(ctx, e.ID, 1, "gave up")
		return err
	}))
	cookie := f.login(t, token).Cookies()[0].String()
	release := f.url + "/console/api/dead-letters/" + ws.String() + "/" + e.ID.String() + "/release"

	res := do(t, "POST", release, strings.NewReader("{}"), map[string]string{
		"Cookie": cookie, "Origin": "https://evil.example", "Content-Type": "application/json"})
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "another origin")
	res = do(t, "POST", release, strings.NewReader("{}"), map[string]string{
		"Cookie": cookie, "Origin": f.url, "Content-Type": "application/json"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"released":1}`, readBody(t, res))
	assert.Equal(t, model.OutboxDispatched, f.eventStatus(t, ws, e.ID))
	var actions []string
	for _, l := range f.auditLines(t) {
		actions = append(actions, l["action"].(string)+" "+l["outcome"].(string))
	}
	assert.Contains(t, actions, "release ok")
}

// Logging out ends the session where it is kept, not only in this
// browser: a copy of the cookie taken before is refused after.
func TestLogoutRevokesTheSession(t *testing.T) {
	f := start(t)
	cookie := f.login(t, token).Cookies()[0].String()
	res := do(t, "GET", f.url+"/console/api/backlog", nil, map[string]string{"Cookie": cookie})
	require.Equal(t, http.StatusOK, res.StatusCode)

	res = do(t, "POST", f.url+"/console/logout", nil, map[string]string{"Cookie": cookie, "Origin": f.url})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res = do(t, "GET", f.url+"/console/api/backlog", nil, map[string]string{"Cookie": cookie})
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the copied cookie after logout")
}

// Wrong tokens typed into the login form are throttled per address: past
// the budget the form answers 429 with Retry-After, the right token too.
func TestWrongLoginsAreThrottled(t *testing.T) {
	f := start(t)
	for i := range opshttp.FailuresPerAddress {
		res := f.login(t, "wrong-"+token)
		require.Equal(t, http.StatusSeeOther, res.StatusCode, "attempt %d", i+1)
	}
	res := f.login(t, token)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	assert.Empty(t, res.Cookies())
}
