package opshttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

const token = "operator-token-0123456789abcdef0123456789"

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = w.Write([]byte(opshttp.OperatorOf(r.Context())))
})

// legacyGuard guards with the one shared token of ONCE_OPERATOR_TOKEN.
func legacyGuard(t *testing.T, clock ports.Clock) *opshttp.Guard {
	t.Helper()
	ops := opshttp.NewOperators()
	require.NoError(t, ops.AddLegacyToken(token))
	return opshttp.NewGuard(ops, memory.NewOperatorSessions(), clock)
}

// A route that says nothing about who may call it is not served at all.
func TestARouteWithoutAccessIsRefused(t *testing.T) {
	_, err := opshttp.NewMux([]opshttp.Route{{Pattern: "POST /act", Handler: ok}}, legacyGuard(t, system.NewClock()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "POST /act")
}

func serve(t *testing.T, guard *opshttp.Guard, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	mux, err := opshttp.NewMux([]opshttp.Route{
		{Pattern: "POST /act", Handler: ok, Access: opshttp.Operator},
		{Pattern: "GET /open", Handler: ok, Access: opshttp.Open},
	}, guard)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec
}

// curl with the bearer token passes, named by its credential (X-Operator
// names no one: a name anyone may type is no name for the audit log);
// without it, or with another token, 401 and how to authenticate.
func TestTheOperatorTokenAsABearer(t *testing.T) {
	guard := legacyGuard(t, system.NewClock())
	req := httptest.NewRequest(http.MethodPost, "/act", nil)
	rec := serve(t, guard, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, rec.Header().Get("WWW-Authenticate"), "Bearer")
	assert.Contains(t, rec.Body.String(), "an operator's token is required")

	req.Header.Set("Authorization", "Bearer "+token+"x")
	assert.Equal(t, http.StatusUnauthorized, serve(t, guard, req).Code)

	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Operator", "ci")
	rec = serve(t, guard, req)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "operator", rec.Body.String())

	assert.Equal(t, http.StatusOK, serve(t, guard, httptest.NewRequest(http.MethodGet, "/open", nil)).Code)
}

// With no operator token the operator's routes are off, not open.
func TestWithoutAnOperatorTokenTheOperatorsRoutesAreOff(t *testing.T) {
	guard := opshttp.NewGuard(opshttp.NewOperators(), memory.NewOperatorSessions(), system.NewClock())
	req := httptest.NewRequest(http.MethodPost, "/act", nil)
	req.Header.Set("Authorization", "Bearer ")
	rec := serve(t, guard, req)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, rec.Body.String(), "set ONCE_OPERATORS")
}

// A browser's change from another origin is refused even with the token;
// the listener's own origin passes.
func TestACrossOriginChangeIsRefused(t *testing.T) {
	guard := legacyGuard(t, system.NewClock())
	for name, headers := range map[string]map[string]string{
		"cross-site": {"Sec-Fetch-Site": "cross-site"},
		"same-site":  {"Sec-Fetch-Site": "same-site"},
		"origin":     {"Origin": "https://evil.example"},
	} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9180/act", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		assert.Equal(t, http.StatusForbidden, serve(t, guard, req).Code, name)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9180/act", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Origin", "http://127.0.0.1:9180")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusOK, serve(t, guard, req).Code)
}

// fromAddr is a request to POST /act from addr, with bearer when set.
func fromAddr(addr, bearer string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/act", nil)
	req.RemoteAddr = addr
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return req
}

// Guessing the token is throttled: an address's wrong bearers are answered
// 401 up to its budget of failures, then 429 with Retry-After, the right
// token included (else the throttle would still tell a guess that hits);
// another address is not held back by them.
func TestWrongBearersAreThrottledPerAddress(t *testing.T) {
	guard := legacyGuard(t, testkit.NewManualClock())
	for i := range opshttp.FailuresPerAddress {
		assert.Equal(t, http.StatusUnauthorized, serve(t, guard, fromAddr("192.0.2.1:4000", "wrong-"+token)).Code, "attempt %d", i+1)
	}
	rec := serve(t, guard, fromAddr("192.0.2.1:4001", "wrong-"+token))
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	assert.Equal(t, http.StatusTooManyRequests, serve(t, guard, fromAddr("192.0.2.1:4002", token)).Code, "the right token too")
	assert.Equal(t, http.StatusOK, serve(t, guard, fromAddr("192.0.2.2:4000", token)).Code, "another address")
}
