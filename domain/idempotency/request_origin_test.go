package idempotency_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
)

// The origin is the scope's: the same scope gives the same origin, a
// change of any part another one, and the key does not show in it.
func TestRequestOriginIsOnePerScope(t *testing.T) {
	scope := model.IdempotencyScope{WorkspaceID: uuid.New(), UserID: uuid.New(), Method: "POST", Path: "/v1/stores", Key: uuid.New()}
	origin := idempotency.RequestOrigin(scope)
	assert.Equal(t, origin, idempotency.RequestOrigin(scope))
	for name, change := range map[string]func(*model.IdempotencyScope){
		"workspace": func(s *model.IdempotencyScope) { s.WorkspaceID = uuid.New() },
		"user":      func(s *model.IdempotencyScope) { s.UserID = uuid.New() },
		"method":    func(s *model.IdempotencyScope) { s.Method = "PUT" },
		"path":      func(s *model.IdempotencyScope) { s.Path = "/v1/stores/x/authorization" },
		"key":       func(s *model.IdempotencyScope) { s.Key = uuid.New() },
		// Parts are length-prefixed: moving text from one to the next is
		// another scope.
		"boundary": func(s *model.IdempotencyScope) { s.Method, s.Path = "POST/v1", "/stores" },
	} {
		other := scope
		change(&other)
		assert.NotEqual(t, origin, idempotency.RequestOrigin(other), name)
	}
	assert.NotContains(t, strings.ReplaceAll(origin.String(), "-", ""), strings.ReplaceAll(scope.Key.String(), "-", "")[:12])
}
