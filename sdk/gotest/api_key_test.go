package gotest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	once "github.com/oncehq/once/sdk/go"
	"github.com/oncehq/once/testsupport/apitest"
)

// A machine client authenticates with an API key: the admin makes one
// through the SDK, the client sends it as its bearer token (WithAPIKey).
func TestTheSDKAuthenticatesWithAnAPIKey(t *testing.T) {
	s := apitest.Memory(t)
	admin, err := once.NewClientWithResponses(s.URL, once.WithBearerToken(s.Token))
	require.NoError(t, err)
	created, err := once.Idempotent(t.Context(), once.RetryPolicy{},
		func(ctx context.Context, key string) (*http.Response, error) {
			return admin.CreateAPIKey(ctx, &once.CreateAPIKeyParams{IdempotencyKey: key}, once.CreateAPIKeyRequest{
				Name: "ERP sync", Scopes: []once.CreateAPIKeyRequestScopes{"operations:read", "keys:read"}})
		}, once.ParseCreateAPIKeyResponse)
	require.NoError(t, err)
	require.NotNil(t, created.JSON201, "%s", created.Body)
	require.NotNil(t, created.JSON201.Secret)

	machine, err := once.NewClientWithResponses(s.URL, once.WithAPIKey(*created.JSON201.Secret))
	require.NoError(t, err)
	ops, err := machine.ListOperationsWithResponse(t.Context(), &once.ListOperationsParams{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, ops.StatusCode(), "%s", ops.Body)
	keys, err := machine.ListAPIKeysWithResponse(t.Context(), &once.ListAPIKeysParams{})
	require.NoError(t, err)
	require.NotNil(t, keys.JSON200)
	require.Len(t, keys.JSON200.Items, 1)
	assert.Equal(t, created.JSON201.Id, keys.JSON200.Items[0].Id)
	assert.Nil(t, keys.JSON200.Items[0].RevokedAt)

	_, err = once.NewClientWithResponses(s.URL, once.WithAPIKey("eyJ-not-a-key"))
	assert.Error(t, err, "a token that is no API key is refused at once")
}
