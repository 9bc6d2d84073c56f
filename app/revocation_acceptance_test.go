package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// twoServes are two `once serve` over one PostgreSQL database, sharing
// one manual clock (the TTLs and refresh intervals they decide by), as
// two processes behind a balancer; the first's workspace and admin are
// the test's.
func twoServes(t *testing.T) (here, there *apitest.Server, clock *apitest.ManualClock) {
	t.Helper()
	db := pgtest.New(t)
	clock = apitest.NewManualClock()
	cfg := apitest.Config(db.AppDSN)
	here = apitest.Start(t, cfg, db, apitest.WithClock(clock))
	there = apitest.Start(t, cfg, db, apitest.WithClock(clock))
	return here, there, clock
}

// refusedWithin polls read, moving clock on by step before each poll,
// until it answers want; it fails when polls polls have gone by without.
// It never waits on the wall clock: the bound is in clock's time.
func refusedWithin(t *testing.T, clock *apitest.ManualClock, step time.Duration, polls int, want int, read func() apitest.Response) apitest.Response {
	t.Helper()
	var last apitest.Response
	for range polls {
		clock.Advance(step)
		if last = read(); last.Status == want {
			return last
		}
	}
	t.Fatalf("still %d after %d polls of %s: %s", last.Status, polls, step, last.Body)
	return last
}

// A member removed through one serve is refused (403) by another within
// the membership cache's TTL (ONCE_AUTH_CACHE_TTL, 5 s by default), which
// that process's cache had remembered before the removal.
func TestMemberRemovedThroughOneServeIsRefusedByAnotherWithinTheTTL(t *testing.T) {
	here, there, clock := twoServes(t)
	member := uuid.New()
	r := here.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": member, "role": "member"}, nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	token := here.TokenFor(t, here.Workspace, member)
	read := func() apitest.Response {
		return there.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, map[string]string{"Authorization": "Bearer " + token})
	}
	require.Equal(t, http.StatusOK, read().Status, "the member, remembered by the other serve")

	r = here.Do(t, http.MethodDelete, "/v1/members/"+member.String(), nil, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	// 5 s of the clock in 1 s steps, and one more: refused by then.
	refused := refusedWithin(t, clock, time.Second, 6, http.StatusForbidden, read)
	require.Equal(t, "FORBIDDEN", refused.Problem(t).Code)
}

// bearer is the Authorization header of token.
func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// A token revoked by its bearer (logout) through one serve is refused 401
// TOKEN_REVOKED by that serve at once, and by another within its refresh
// of the revocations (ONCE_TOKEN_REVOCATION_REFRESH, 5 s by default),
// though the other had verified and remembered it before; another token
// of the same member is not affected.
func TestRevokedTokenIsRefusedByAnotherServeWithinTheBound(t *testing.T) {
	here, there, clock := twoServes(t)
	member := uuid.New()
	r := here.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": member, "role": "member"}, nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	token, other := here.TokenFor(t, here.Workspace, member), here.TokenFor(t, here.Workspace, member)
	readThere := func(token string) func() apitest.Response {
		return func() apitest.Response {
			return there.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, bearer(token))
		}
	}
	require.Equal(t, http.StatusOK, readThere(token)().Status, "verified and remembered by the other serve")

	r = here.Do(t, http.MethodPost, "/v1/tokens/revoke", nil, bearer(token))
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	r = here.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, bearer(token))
	require.Equal(t, http.StatusUnauthorized, r.Status, "refused at once where it was revoked")
	require.Equal(t, "TOKEN_REVOKED", r.Problem(t).Code)

	refused := refusedWithin(t, clock, time.Second, 6, http.StatusUnauthorized, readThere(token))
	require.Equal(t, "TOKEN_REVOKED", refused.Problem(t).Code)
	require.Equal(t, http.StatusOK, readThere(other)().Status, "the member's other token")
}

// An admin revoking a member's tokens ("sign out everywhere") refuses the
// tokens issued before, on every serve within the bound, and accepts one
// issued after.
func TestRevokingAMembersTokensRefusesTheOlderAndAcceptsANewOne(t *testing.T) {
	here, there, clock := twoServes(t)
	member := uuid.New()
	r := here.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": member, "role": "member"}, nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	older := here.TokenFor(t, here.Workspace, member)
	readThere := func(token string) func() apitest.Response {
		return func() apitest.Response {
			return there.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, bearer(token))
		}
	}
	require.Equal(t, http.StatusOK, readThere(older)().Status)

	r = here.Do(t, http.MethodPost, "/v1/members/"+member.String()+"/revoke-tokens", nil, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	refused := refusedWithin(t, clock, time.Second, 6, http.StatusUnauthorized, readThere(older))
	require.Equal(t, "TOKEN_REVOKED", refused.Problem(t).Code)

	clock.Advance(time.Second) // iat counts whole seconds
	newer := here.TokenFor(t, here.Workspace, member)
	require.Equal(t, http.StatusOK, readThere(newer)().Status, "a token issued after the revocation")
	r = here.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, bearer(newer))
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
}

// What a caller may not revoke, and input that is not a token, are 4xx,
// never 500.
func TestRevocationRefusesHostileInput(t *testing.T) {
	here, _, _ := twoServes(t)
	member := uuid.New()
	r := here.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": member, "role": "member"}, nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	memberToken := here.TokenFor(t, here.Workspace, member)
	for name, c := range map[string]struct {
		path    string
		body    any
		headers map[string]string
		status  int
		code    string
	}{
		"garbage token":              {"/v1/tokens/revoke", map[string]any{"token": "not.a.token"}, nil, http.StatusUnprocessableEntity, "VALIDATION_FAILED"},
		"empty token":                {"/v1/tokens/revoke", map[string]any{"token": ""}, nil, http.StatusUnprocessableEntity, "VALIDATION_FAILED"},
		"token of the wrong type":    {"/v1/tokens/revoke", `{"token": 42}`, nil, http.StatusUnprocessableEntity, "VALIDATION_FAILED"},
		"body not JSON":              {"/v1/tokens/revoke", "{", nil, http.StatusBadRequest, "VALIDATION_FAILED"},
		"another user's token":       {"/v1/tokens/revoke", map[string]any{"token": memberToken}, nil, http.StatusForbidden, "FORBIDDEN"},
		"no bearer":                  {"/v1/tokens/revoke", nil, map[string]string{"Authorization": ""}, http.StatusUnauthorized, "UNAUTHENTICATED"},
		"a member revoking an admin": {"/v1/members/" + here.User.String() + "/revoke-tokens", nil, bearer(memberToken), http.StatusForbidden, "FORBIDDEN"},
		"not a user id":              {"/v1/members/nope/revoke-tokens", nil, nil, http.StatusUnprocessableEntity, "VALIDATION_FAILED"},
	} {
		t.Run(name, func(t *testing.T) {
			r := here.Do(t, http.MethodPost, c.path, c.body, c.headers)
			require.Equal(t, c.status, r.Status, string(r.Body))
			require.Equal(t, c.code, r.Problem(t).Code)
		})
	}
	r = here.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, bearer(memberToken))
	require.Equal(t, http.StatusOK, r.Status, "nothing was revoked: %s", r.Body)
}
