package once

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// APIKeyPrefix starts every API key of once ("once_sk_", then a lookup id
// and the secret part; docs/api.md#api-keys gives the full form).
const APIKeyPrefix = "once_sk_"

// WithBearerToken authenticates every request with a user's token (a JWT
// from the identity provider, or one `once token` made).
func WithBearerToken(token string) ClientOption {
	return withAuthorization(token)
}

// WithAPIKey authenticates every request with an API key, the credential
// of a machine client (POST /v1/api-keys makes one): it is sent as the
// bearer token. NewClient fails for a key that does not start with
// APIKeyPrefix, a token passed by mistake, rather than at the first
// request.
func WithAPIKey(key string) ClientOption {
	if !strings.HasPrefix(key, APIKeyPrefix) {
		return func(*Client) error { return errors.New("once: an API key starts with " + APIKeyPrefix) }
	}
	return withAuthorization(key)
}

func withAuthorization(token string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}
