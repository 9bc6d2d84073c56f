package idempotency

import (
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// originNamespace is the UUIDv5 namespace of request origins.
var originNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/oncehq/once#request-origin"))

// RequestOrigin names scope for the request tokens of the jobs its request
// starts (model.WithRequestOrigin, domain/model/request_token.go): the same
// for every execution of the scope, in any process, after any restart or
// failover, and another for any other scope. It is a name-based (SHA-1)
// UUID of the whole scope, each part length-prefixed so that distinct
// scopes give distinct names. The key, 122 random bits, cannot be read back
// from it: a token in a log or at the platform does not give the key away.
func RequestOrigin(s model.IdempotencyScope) uuid.UUID {
	var b strings.Builder
	for _, part := range []string{s.WorkspaceID.String(), s.UserID.String(), s.Method, s.Path, s.Key.String()} {
		b.WriteString(strconv.Itoa(len(part)))
		b.WriteByte(':')
		b.WriteString(part)
	}
	return uuid.NewSHA1(originNamespace, []byte(b.String()))
}
