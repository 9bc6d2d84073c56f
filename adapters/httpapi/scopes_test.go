package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

// TestEverySecuredOperationNeedsOneScope walks every operation of the spec
// the server serves: each authenticated one names the one scope it needs
// (x-once-scope), a known one, a read scope for a GET and a write scope
// for anything else, and says so in its description.
func TestEverySecuredOperationNeedsOneScope(t *testing.T) {
	s := apitest.Memory(t)
	ops := servedOperations(t, s)
	require.NotEmpty(t, ops)
	for _, op := range ops {
		if len(op.Security) == 0 {
			continue
		}
		scope := model.Scope(op.Scope)
		if scope == httpapi.ScopeOwnToken {
			assert.Equal(t, "revokeToken", op.ID, "only logging out acts on the caller's own token alone")
			continue
		}
		if !assert.True(t, scope.Valid(), "%s %s (%s) declares no known scope: %q", op.Method, op.Path, op.ID, op.Scope) {
			continue
		}
		want := ":write"
		if op.Method == http.MethodGet {
			want = ":read"
		}
		assert.True(t, strings.HasSuffix(op.Scope, want), "%s %s (%s) needs %s, not a %s scope", op.Method, op.Path, op.ID, op.Scope, want)
		assert.Contains(t, op.Description, "`"+op.Scope+"`", "%s does not name its scope", op.ID)
	}
}

// withPathIDs is op's path with a fresh id in every path parameter.
func withPathIDs(op servedOperation) string {
	path := op.Path
	for _, p := range op.Parameters {
		if p.In == "path" {
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(uuid.NewString()))
		}
	}
	return path
}

// TestAReadOnlyKeyReadsAndCannotWrite: a real API key, created by the
// workspace's admin with every read scope and nothing else, is refused
// every write route of the spec with 403 INSUFFICIENT_SCOPE naming the
// scope, before anything else looks at the request (no Idempotency-Key, no
// body is sent), and no read route refuses it.
func TestAReadOnlyKeyReadsAndCannotWrite(t *testing.T) {
	var reads []model.Scope
	for _, sc := range model.AllScopes {
		if strings.HasSuffix(string(sc), ":read") {
			reads = append(reads, sc)
		}
	}
	s := apitest.Memory(t)
	res := s.Do(t, http.MethodPost, "/v1/api-keys", map[string]any{"name": "read only", "scopes": reads},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, res.Status, res.Body)
	var key httpapi.APIKeyCreated
	res.JSON(t, &key)
	require.NotEmpty(t, key.Secret)

	refused := walkScopes(t, s, map[string]string{"Authorization": "Bearer " + key.Secret}, reads, "INSUFFICIENT_SCOPE")
	for _, op := range refused {
		assert.NotEqual(t, http.MethodGet, op.Method, "%s %s refused to a key with every read scope", op.Method, op.Path)
	}
	assert.Greater(t, len(refused), 20, "the walk found the write routes")
}

// TestAMemberKeepsItsRights: a member (not an admin) is refused the routes
// of the admin-only scopes with 403 FORBIDDEN, as before scopes, and no
// other route refuses it.
func TestAMemberKeepsItsRights(t *testing.T) {
	s := apitest.Memory(t)
	member := uuid.New()
	require.NoError(t, s.WS.EnsureMember(context.Background(), s.Workspace, member, model.RoleMember))
	asMember := map[string]string{"Authorization": "Bearer " + s.TokenFor(t, s.Workspace, member)}
	refused := walkScopes(t, s, asMember, model.RoleScopes(model.RoleMember), "FORBIDDEN")
	assert.Greater(t, len(refused), 10, "the walk found the admin-only routes")
}

// walkScopes calls every authenticated operation the server's spec lists,
// with headers and without a body or Idempotency-Key, as a caller holding
// scopes: an operation whose scope is among them must not answer 403, any
// other must answer 403 with code, its detail naming the scope. It returns
// the operations refused.
func walkScopes(t *testing.T, s *apitest.Server, headers map[string]string, scopes []model.Scope, code string) []servedOperation {
	t.Helper()
	var refused []servedOperation
	for _, op := range servedOperations(t, s) {
		if len(op.Security) == 0 || model.Scope(op.Scope) == httpapi.ScopeOwnToken {
			continue // logging out would revoke the walk's own token; the revocation tests cover it
		}
		res := s.Do(t, op.Method, withPathIDs(op), nil, headers)
		name := op.Method + " " + op.Path
		if slices.Contains(scopes, model.Scope(op.Scope)) {
			assert.NotEqual(t, http.StatusForbidden, res.Status, "%s (%s) refused: %s", name, op.Scope, res.Body)
			continue
		}
		refused = append(refused, op)
		if assert.Equal(t, http.StatusForbidden, res.Status, "%s: %s", name, res.Body) {
			problem := res.Problem(t)
			assert.Equal(t, code, problem.Code, "%s: %s", name, res.Body)
			assert.Contains(t, problem.Detail, op.Scope, "%s: the detail names the scope needed", name)
		}
	}
	return refused
}

// TestARefusedKeyCostsTheWorkspaceNothing: the scope is checked before the
// workspace's limits, so writes refused to a read-only key are not charged
// to the workspace's rate; its admin's write still goes through.
func TestARefusedKeyCostsTheWorkspaceNothing(t *testing.T) {
	const keyToken = "read-only-key"
	var s *apitest.Server
	cfg := apitest.Config("")
	cfg.RateLimit = "1/h" // one write an hour: none comes back during the test
	s = apitest.Start(t, cfg, nil, fx.Decorate(func(authenticate httpapi.Authenticator) httpapi.Authenticator {
		return func(ctx context.Context, token string) (model.Principal, error) {
			if token != keyToken {
				return authenticate(ctx, token)
			}
			return model.Principal{WorkspaceID: s.Workspace, UserID: s.User, Role: model.RoleAdmin,
				APIKeyID: uuid.New(), Scopes: []model.Scope{model.ScopeProductsRead}}, nil
		}
	}))
	product := map[string]any{"title": "Mug", "price_minor": 900, "currency": "EUR"}
	for range 3 {
		res := s.Do(t, http.MethodPost, "/v1/products", product, map[string]string{"Authorization": "Bearer " + keyToken})
		require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
		assert.Equal(t, "INSUFFICIENT_SCOPE", res.Problem(t).Code)
	}
	res := s.Do(t, http.MethodPost, "/v1/products", product, nil)
	assert.Equal(t, http.StatusCreated, res.Status, "the refused writes used up the workspace's rate: %s", res.Body)
}
