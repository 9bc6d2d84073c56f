package opshttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/testsupport/testkit"
)

const (
	aliceToken = "alice-token-0123456789abcdef0123456789abcd"
	bobToken   = "bob-token-0123456789abcdef0123456789abcdef"
)

func operators(t *testing.T, entries ...string) *opshttp.Operators {
	t.Helper()
	ops := opshttp.NewOperators()
	for _, e := range entries {
		require.NoError(t, ops.AddEntries(e))
	}
	return ops
}

// Each operator's token names them: the audit log's name comes from the
// credential, whatever X-Operator says.
func TestEachOperatorIsNamedByTheirToken(t *testing.T) {
	guard := opshttp.NewGuard(operators(t, opshttp.Entry("alice", aliceToken)+","+opshttp.Entry("bob", bobToken)),
		memory.NewOperatorSessions(), testkit.NewManualClock())
	for token, name := range map[string]string{aliceToken: "alice", bobToken: "bob"} {
		req := fromAddr("192.0.2.1:4000", token)
		req.Header.Set("X-Operator", "mallory")
		rec := serve(t, guard, req)
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, name, rec.Body.String())
	}
}

func TestOperatorEntries(t *testing.T) {
	ops := operators(t, "# the platform team\nalice:"+opshttp.HashToken(aliceToken).String()+"\n\n bob : "+opshttp.HashToken(bobToken).String()+"\n")
	assert.ElementsMatch(t, []string{"alice", "bob"}, ops.Names())
	for name, entries := range map[string]string{
		"a token, not its hash": "alice:" + aliceToken,
		"no hash":               "alice",
		"a name twice":          opshttp.Entry("alice", aliceToken) + "," + opshttp.Entry("alice", bobToken),
		"one token twice":       opshttp.Entry("alice", aliceToken) + "," + opshttp.Entry("bob", aliceToken),
		"a name with a space":   opshttp.Entry("al ice", aliceToken),
	} {
		err := opshttp.NewOperators().AddEntries(entries)
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), aliceToken, "%s: the token is not repeated", name)
	}
	assert.Error(t, opshttp.NewOperators().AddLegacyToken("short"))
}

// login starts a session through guard and returns its cookie.
func login(t *testing.T, guard *opshttp.Guard, token string) *http.Cookie {
	t.Helper()
	value, _, err := guard.Login(httptest.NewRequest(http.MethodPost, "/console/login", nil), token)
	require.NoError(t, err)
	return &http.Cookie{Name: opshttp.SessionCookie, Value: value}
}

func sessionOf(guard *opshttp.Guard, cookie *http.Cookie) (string, bool) {
	req := httptest.NewRequest(http.MethodGet, "/console/", nil)
	req.AddCookie(cookie)
	return guard.SessionOperator(req)
}

// A session is kept where every process reads it: good in another process
// with the same operators, refused by one where its operator was removed
// or given a new token, and by all once logged out or revoked.
func TestASessionLivesWhereItIsKept(t *testing.T) {
	sessions, clock := memory.NewOperatorSessions(), testkit.NewManualClock()
	both := opshttp.Entry("alice", aliceToken) + "," + opshttp.Entry("bob", bobToken)
	guard := func(entries string) *opshttp.Guard { return opshttp.NewGuard(operators(t, entries), sessions, clock) }
	here, there := guard(both), guard(both)

	alice := login(t, here, aliceToken)
	name, ok := sessionOf(there, alice)
	require.True(t, ok, "another process")
	assert.Equal(t, "alice", name)
	_, ok = sessionOf(guard(opshttp.Entry("bob", bobToken)), alice)
	assert.False(t, ok, "alice removed")
	_, ok = sessionOf(guard(opshttp.Entry("alice", "alice-new-token-0123456789abcdef0123456789")), alice)
	assert.False(t, ok, "alice's token changed")

	req := httptest.NewRequest(http.MethodPost, "/console/logout", nil)
	req.AddCookie(alice)
	require.NoError(t, here.Logout(req))
	_, ok = sessionOf(there, alice)
	assert.False(t, ok, "logged out through another process")

	a1, a2, bob := login(t, here, aliceToken), login(t, there, aliceToken), login(t, here, bobToken)
	n, err := there.RevokeSessions(t.Context(), "alice")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, c := range []*http.Cookie{a1, a2} {
		_, ok = sessionOf(here, c)
		assert.False(t, ok, "revoked")
	}
	_, ok = sessionOf(here, bob)
	assert.True(t, ok, "bob's is not alice's")

	clock.Advance(opshttp.SessionTTL)
	_, ok = sessionOf(here, bob)
	assert.False(t, ok, "expired")
}

// Failures from many addresses, each within its own budget, meet the
// global bound: then every attempt waits, the right token from a fresh
// address too, until the bound refills.
func TestTheGlobalBoundOfFailures(t *testing.T) {
	clock := testkit.NewManualClock()
	guard := legacyGuard(t, clock)
	for i := range opshttp.FailuresInAll {
		rec := serve(t, guard, fromAddr(fmt.Sprintf("10.0.%d.%d:5000", i/250, i%250), "wrong-"+token))
		require.Equal(t, http.StatusUnauthorized, rec.Code, "attempt %d", i+1)
	}
	rec := serve(t, guard, fromAddr("192.0.2.9:5000", token))
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "1", rec.Header().Get("Retry-After"))
	clock.Advance(time.Second / opshttp.GlobalRefillPerSecond)
	assert.Equal(t, http.StatusOK, serve(t, guard, fromAddr("192.0.2.9:5000", token)).Code)
}
