package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// opsCall sends one request to the ops listener with the headers given.
func opsCall(t *testing.T, method, u string, headers map[string]string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(raw)
}

// operatorServer is the service with workers, the operator token set and,
// when pprof is true, the profiler on.
func operatorServer(t *testing.T, pprof bool) *apitest.Server {
	cfg := apitest.Config("")
	cfg.OperatorToken = consoleToken
	cfg.OpsPprof = pprof
	cfg.Worker = true
	return apitest.Start(t, cfg, nil)
}

var operatorBearer = map[string]string{"Authorization": "Bearer " + consoleToken}

// pausedDestinations reads GET /destinations with the operator token.
func pausedDestinations(t *testing.T, s *apitest.Server) map[string]bool {
	t.Helper()
	status, body := opsCall(t, http.MethodGet, s.OpsURL+"/destinations", operatorBearer, nil)
	require.Equal(t, http.StatusOK, status, body)
	var states []struct {
		Destination string
		Paused      bool
	}
	require.NoError(t, json.Unmarshal([]byte(body), &states), body)
	paused := map[string]bool{}
	for _, s := range states {
		paused[s.Destination] = s.Paused
	}
	return paused
}

// Pausing a destination stops a platform's calls for every workspace: it
// takes the operator token, and a caller without it changes nothing.
func TestPausingADestinationNeedsTheOperatorToken(t *testing.T) {
	s := operatorServer(t, false)
	pause := s.OpsURL + "/destinations/pause?destination=ai/default"

	for name, headers := range map[string]map[string]string{
		"none":         nil,
		"wrong token":  {"Authorization": "Bearer " + strings.Repeat("x", len(consoleToken))},
		"tenant token": {"Authorization": "Bearer " + s.Token},
		"not bearer":   {"Authorization": "Basic " + consoleToken},
	} {
		status, body := opsCall(t, http.MethodPost, pause, headers, nil)
		assert.Equal(t, http.StatusUnauthorized, status, "%s: %s", name, body)
	}
	assert.False(t, pausedDestinations(t, s)["ai/default"], "refused callers paused nothing")

	status, body := opsCall(t, http.MethodPost, pause, operatorBearer, nil)
	require.Equal(t, http.StatusNoContent, status, body)
	assert.True(t, pausedDestinations(t, s)["ai/default"])

	status, body = opsCall(t, http.MethodPost, s.OpsURL+"/destinations/resume?destination=ai/default", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, status, body)
	status, body = opsCall(t, http.MethodPost, s.OpsURL+"/destinations/close-breaker?destination=ai/default", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, status, body)
	assert.True(t, pausedDestinations(t, s)["ai/default"])

	// The destinations name tenants' shops: reading them takes the token too.
	status, body = opsCall(t, http.MethodGet, s.OpsURL+"/destinations", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, status, body)
}

// consoleSession logs in to the console and returns its session cookie.
func consoleSession(t *testing.T, s *apitest.Server) string {
	t.Helper()
	form := url.Values{"operator": {"alice"}, "token": {consoleToken}}
	req, err := http.NewRequest(http.MethodPost, s.OpsURL+"/console/login", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.OpsURL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Len(t, res.Cookies(), 1)
	return res.Cookies()[0].Name + "=" + res.Cookies()[0].Value
}

// A browser's cross-site or same-site request that would change something
// is refused, whatever credential it carries: another page open in an
// operator's browser cannot act with the operator's session.
func TestACrossSiteChangeIsRefusedWithAValidSession(t *testing.T) {
	s := operatorServer(t, false)
	cookie := consoleSession(t, s)
	redrive := s.OpsURL + "/console/api/groups/redrive"
	body := `{"key":"none"}`

	for _, site := range []string{"cross-site", "same-site"} {
		status, answer := opsCall(t, http.MethodPost, redrive,
			map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Sec-Fetch-Site": site}, strings.NewReader(body))
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", site, answer)
	}
	status, answer := opsCall(t, http.MethodPost, s.OpsURL+"/destinations/pause?destination=ai/default",
		map[string]string{"Authorization": "Bearer " + consoleToken, "Origin": "https://evil.example"}, nil)
	assert.Equal(t, http.StatusForbidden, status, answer)
	status, answer = opsCall(t, http.MethodPost, s.OpsURL+"/destinations/pause?destination=ai/default",
		map[string]string{"Authorization": "Bearer " + consoleToken, "Sec-Fetch-Site": "cross-site"}, nil)
	assert.Equal(t, http.StatusForbidden, status, answer)
	assert.False(t, pausedDestinations(t, s)["ai/default"])

	// The console's own page may: same origin.
	status, answer = opsCall(t, http.MethodPost, redrive,
		map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin", "Origin": s.OpsURL}, strings.NewReader(body))
	assert.NotEqual(t, http.StatusForbidden, status, answer)
	assert.NotEqual(t, http.StatusUnauthorized, status, answer)
}

// The profiler shows a process's memory and command line: it takes the
// operator token when it is on.
func TestPprofNeedsTheOperatorToken(t *testing.T) {
	s := operatorServer(t, true)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap"} {
		status, body := opsCall(t, http.MethodGet, s.OpsURL+path, nil, nil)
		assert.Equal(t, http.StatusUnauthorized, status, "%s: %s", path, body)
		status, _ = opsCall(t, http.MethodGet, s.OpsURL+path, operatorBearer, nil)
		assert.Equal(t, http.StatusOK, status, path)
	}
}

// Prometheus and the probes carry no credential: metrics and health stay
// open.
func TestMetricsAndHealthStayOpen(t *testing.T) {
	s := operatorServer(t, false)
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		status, body := opsCall(t, http.MethodGet, s.OpsURL+path, nil, nil)
		assert.Equal(t, http.StatusOK, status, "%s: %s", path, body)
	}
}

// With no operator token set, the operator's actions are off, never open,
// and say which setting turns them on.
func TestOperatorActionsAreOffWithoutAnOperatorToken(t *testing.T) {
	cfg := apitest.Config("")
	cfg.Worker = true
	s := apitest.Start(t, cfg, nil)
	for _, call := range [][2]string{
		{http.MethodPost, "/destinations/pause?destination=ai/default"},
		{http.MethodGet, "/destinations"},
	} {
		status, body := opsCall(t, call[0], s.OpsURL+call[1], nil, nil)
		assert.Equal(t, http.StatusForbidden, status, "%s %s: %s", call[0], call[1], body)
		assert.Contains(t, body, "ONCE_OPERATOR_TOKEN", call[1])
	}
}

// requestsOf are the requests that reach a route's pattern: its method, or
// GET and POST for a pattern of any method; a wildcard takes a UUID.
func requestsOf(pattern string) [][2]string {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	path = strings.ReplaceAll(path, "{$}", "")
	segments := strings.Split(path, "/")
	for i, seg := range segments {
		if strings.HasPrefix(seg, "{") {
			segments[i] = uuid.NewString()
		}
	}
	path = strings.Join(segments, "/")
	if method == "" {
		return [][2]string{{http.MethodGet, path}, {http.MethodPost, path}}
	}
	return [][2]string{{method, path}}
}

// Every route of the ops listener declares who may call it, and every
// operator route, in a process with every part on, answers a caller
// without the operator credential 401 and nothing else. The open routes
// that take a POST are the console's login and logout, which change no
// state of the service.
func TestEveryOpsRouteIsOpenOrTheOperators(t *testing.T) {
	cfg := apitest.Config("")
	cfg.OperatorToken = consoleToken
	cfg.OpsPprof = true
	cfg.Worker = true
	cfg.Dispatcher = true
	var routes []app.OpsRoute
	s := apitest.Start(t, cfg, nil, opsRoutes(&routes))
	require.NotEmpty(t, routes)

	openPosts := map[string]bool{"POST /console/login": true, "POST /console/logout": true}
	operator := 0
	for _, r := range routes {
		switch r.Access {
		case opshttp.Open:
			for _, req := range requestsOf(r.Pattern) {
				if req[0] != http.MethodGet && !openPosts[r.Pattern] {
					// The console's catch-all answers 404 to any method.
					if r.Pattern == "/console/" {
						status, body := opsCall(t, req[0], s.OpsURL+req[1], nil, nil)
						assert.Equal(t, http.StatusNotFound, status, body)
						continue
					}
					t.Errorf("open route %q takes %s: declare it opshttp.Operator", r.Pattern, req[0])
				}
			}
		case opshttp.Operator:
			operator++
			for _, req := range requestsOf(r.Pattern) {
				status, body := opsCall(t, req[0], s.OpsURL+req[1], nil, nil)
				assert.Equal(t, http.StatusUnauthorized, status, "%s %s (%s): %s", req[0], req[1], r.Pattern, body)
			}
		default:
			t.Errorf("ops route %q declares no access", r.Pattern)
		}
	}
	assert.GreaterOrEqual(t, operator, 6, "destinations (4), pprof, the console's API")
}

// A console session is kept in PostgreSQL, so every process sees it and
// its end: an operator revokes all of an operator's sessions through one
// process and another refuses them at once.
func TestRevokedSessionsAreRefusedByEveryProcess(t *testing.T) {
	db := pgtest.New(t)
	start := func() *apitest.Server {
		cfg := apitest.Config(db.AppDSN)
		cfg.OperatorToken = consoleToken
		return apitest.Start(t, cfg, db)
	}
	a, b := start(), start()
	cookie := consoleSession(t, a)
	backlog := func(s *apitest.Server) int {
		status, _ := opsCall(t, http.MethodGet, s.OpsURL+"/console/api/backlog", map[string]string{"Cookie": cookie}, nil)
		return status
	}
	require.Equal(t, http.StatusOK, backlog(b), "a session made by one process is good in another")

	status, body := opsCall(t, http.MethodPost, a.OpsURL+"/console/api/operators/operator/revoke-sessions",
		map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Origin": a.OpsURL}, strings.NewReader("{}"))
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"revoked":1}`, body)
	assert.Equal(t, http.StatusUnauthorized, backlog(b), "revoked through a, refused by b")
	assert.Equal(t, http.StatusUnauthorized, backlog(a))
}

// A process that serves the profiler samples its lock waits too
// (/debug/pprof/mutex): a lock that serializes the work shows there, not
// in the CPU profile.
func TestAServedProfilerSamplesLockWaits(t *testing.T) {
	before := runtime.SetMutexProfileFraction(-1)
	t.Cleanup(func() { runtime.SetMutexProfileFraction(before) })
	runtime.SetMutexProfileFraction(0)
	cfg := apitest.Config("")
	cfg.OperatorToken = consoleToken
	cfg.OpsPprof = true
	apitest.Start(t, cfg, nil)
	require.Positive(t, runtime.SetMutexProfileFraction(-1))
}
