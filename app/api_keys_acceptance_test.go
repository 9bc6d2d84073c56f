package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// createKey creates an API key on s as its admin, with idempotencyKey.
func createKey(t *testing.T, s *apitest.Server, idempotencyKey string, scopes ...string) (apitest.Response, httpapi.APIKeyCreated) {
	t.Helper()
	res := s.Do(t, http.MethodPost, "/v1/api-keys", map[string]any{"name": "ERP sync", "scopes": scopes},
		map[string]string{"Idempotency-Key": idempotencyKey})
	var created httpapi.APIKeyCreated
	if res.Status == http.StatusCreated {
		res.JSON(t, &created)
	}
	return res, created
}

// withKey is the headers of a request made with an API key.
func withKey(secret string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + secret}
}

// A key revoked through one serve is refused by a second serve on the
// same database within the documented bound (ONCE_AUTH_CACHE_TTL), by the
// first at once. The second's clock is the test's: the bound passes when
// the test moves it, however slow the machine.
func TestARevokedAPIKeyIsRefusedByASecondServeWithinTheBound(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	first := apitest.Start(t, cfg, db)
	clock := apitest.NewManualClock()
	second := apitest.Start(t, cfg, db, apitest.WithClock(clock))

	res, created := createKey(t, first, uuid.NewString(), "operations:read", "keys:read")
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	require.Regexp(t, "^"+apikeys.SecretPattern.String()+"$", created.Secret)
	read := func(s *apitest.Server) int {
		return s.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, withKey(created.Secret)).Status
	}
	require.Equal(t, http.StatusOK, read(first), "the key works on the serve that made it")
	require.Equal(t, http.StatusOK, read(second), "and on the other, which now remembers it")

	require.Equal(t, http.StatusNoContent, first.Do(t, http.MethodDelete, "/v1/api-keys/"+created.ID.String(), nil, nil).Status)
	assert.Equal(t, http.StatusUnauthorized, read(first), "refused at once where it was revoked")
	assert.Equal(t, http.StatusOK, read(second), "remembered within the bound (what docs/api.md says)")
	clock.Advance(cfg.AuthCacheTTL)
	res = second.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, withKey(created.Secret))
	assert.Equal(t, http.StatusUnauthorized, res.Status, "refused by the other serve once the bound has passed")
	assert.Contains(t, res.Problem(t).Detail, "revoked")

	var listed httpapi.APIKey
	require.Equal(t, http.StatusOK, first.Do(t, http.MethodGet, "/v1/api-keys/"+created.ID.String(), nil, nil).Status)
	first.Do(t, http.MethodGet, "/v1/api-keys/"+created.ID.String(), nil, nil).JSON(t, &listed)
	require.NotNil(t, listed.RevokedAt)
	require.NotNil(t, listed.LastUsedAt, "its use was recorded")
}

// The secret is in the create's answer only; a replay, the list and the
// read show its prefix; the key acts as its admin and names itself in
// the request log; a member makes none.
func TestAnAPIKeyIsShownOnceAndNamedInTheLog(t *testing.T) {
	apitest.OnEachStore(t, func(t *testing.T, s *apitest.Server) {
		idem := uuid.NewString()
		res, created := createKey(t, s, idem, "media:read", "keys:read")
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		assert.Equal(t, "/v1/api-keys/"+created.ID.String(), res.Header.Get("Location"))
		assert.True(t, strings.HasPrefix(created.Secret, created.Prefix+"_"))
		assert.Equal(t, []string{"media:read", "keys:read"}, created.Scopes)
		assert.Equal(t, s.User, created.CreatedBy)

		replay, again := createKey(t, s, idem, "media:read", "keys:read")
		require.Equal(t, http.StatusCreated, replay.Status)
		assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, created.ID, again.ID)
		assert.Empty(t, again.Secret, "a replay answers without the secret")

		list := s.Do(t, http.MethodGet, "/v1/api-keys", nil, withKey(created.Secret))
		require.Equal(t, http.StatusOK, list.Status, "%s", list.Body)
		assert.Contains(t, string(list.Body), created.Prefix)
		assert.NotContains(t, string(list.Body), created.Secret)

		// The key acts as its admin, within its scopes: it makes no key
		// with a scope it lacks.
		res = s.Do(t, http.MethodPost, "/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"media:write"}},
			map[string]string{"Idempotency-Key": uuid.NewString(), "Authorization": "Bearer " + created.Secret})
		assert.Equal(t, http.StatusForbidden, res.Status)

		member := uuid.New()
		require.NoError(t, s.WS.EnsureMember(t.Context(), s.Workspace, member, model.RoleMember))
		res = s.Do(t, http.MethodPost, "/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"media:read"}},
			map[string]string{"Idempotency-Key": uuid.NewString(), "Authorization": "Bearer " + s.TokenFor(t, s.Workspace, member)})
		assert.Equal(t, http.StatusForbidden, res.Status)

		logs := s.Logs.String()
		assert.Contains(t, logs, `"api_key_id":"`+created.ID.String()+`"`, "the request log names the key")
		assert.Contains(t, logs, `"msg":"api key created"`)
		assert.NotContains(t, logs, created.Secret)
		// The secret scan runs over these logs and every row when the
		// server ends (apitest), and knows the key's form.
	})
}

// A token with the key's prefix is never tried as a JWT, and a wrong key
// answers 401 with the bearer challenge.
func TestAWrongAPIKeyIsUnauthenticated(t *testing.T) {
	s := apitest.Memory(t)
	res := s.Do(t, http.MethodGet, "/v1/operations", nil, withKey(apikeys.Prefix+"abcdefabcdef_"+strings.Repeat("A", 43)))
	assert.Equal(t, http.StatusUnauthorized, res.Status)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), "invalid_token")
}

// A key's request refused by the workspace's limits is logged with the
// key: the operator sees which integration ran over.
func TestAKeyOverTheLimitsIsNamedInTheLog(t *testing.T) {
	cfg := apitest.Config("")
	cfg.RateLimit = "2/h" // the key's create and one revoke; nothing comes back during the test
	s := apitest.Start(t, cfg, nil)
	res, created := createKey(t, s, uuid.NewString(), "keys:read", "keys:write")
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	revoke := func() int {
		return s.Do(t, http.MethodDelete, "/v1/api-keys/"+uuid.NewString(), nil, withKey(created.Secret)).Status
	}
	require.Equal(t, http.StatusNotFound, revoke(), "within the rate")
	require.Equal(t, http.StatusTooManyRequests, revoke(), "over it")
	var limited bool
	for _, line := range strings.Split(s.Logs.String(), "\n") {
		if strings.Contains(line, `"msg":"request limited"`) {
			limited = true
			assert.Contains(t, line, `"api_key_id":"`+created.ID.String()+`"`)
		}
	}
	assert.True(t, limited, "a request limited line")
}
