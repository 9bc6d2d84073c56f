package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/testsupport/apitest"
)

// TestAdminsManageWebhookEndpoints: an admin creates, reads, lists,
// updates, rotates and deletes an endpoint; the secret appears in the
// create and rotate answers only, never in a replay, a read or the saved
// responses (the secret scan of apitest checks the tables and logs).
func TestAdminsManageWebhookEndpoints(t *testing.T) {
	s := apitest.Postgres(t)
	s.Resolver.Set("hooks.example.com", "93.184.215.14")
	key := uuid.NewString()
	create := map[string]any{"url": "https://hooks.example.com/once", "event_types": []string{"operation.succeeded", "operation.failed"}}

	res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints", create, map[string]string{"Idempotency-Key": key})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var created httpapi.WebhookEndpointCreated
	res.JSON(t, &created)
	require.True(t, strings.HasPrefix(created.Secret, "whsec_"), "%s", res.Body)
	_, err := standardwebhooks.NewWebhook(created.Secret)
	require.NoError(t, err)
	assert.True(t, created.Enabled, "enabled by default")
	assert.Equal(t, 1, created.SigningKeyVersion)
	assert.Equal(t, "/v1/webhook-endpoints/"+created.ID.String(), res.Header.Get("Location"))
	secrets := []string{created.Secret}

	// A replay is the same answer without the secret, which was never saved.
	res = s.Do(t, http.MethodPost, "/v1/webhook-endpoints", create, map[string]string{"Idempotency-Key": key})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	assert.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))
	var replayed httpapi.WebhookEndpointCreated
	res.JSON(t, &replayed)
	assert.Empty(t, replayed.Secret)
	assert.Equal(t, created.WebhookEndpoint, replayed.WebhookEndpoint)
	assert.NotContains(t, string(res.Body), "whsec_")

	res = s.Do(t, http.MethodGet, "/v1/webhook-endpoints/"+created.ID.String(), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	assert.NotContains(t, string(res.Body), "whsec_")
	res = s.Do(t, http.MethodGet, "/v1/webhook-endpoints", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	assert.NotContains(t, string(res.Body), "whsec_")
	var list httpapi.ListOf[httpapi.WebhookEndpoint]
	res.JSON(t, &list)
	require.Len(t, list.Items, 1)
	assert.Equal(t, created.ID, list.Items[0].ID)

	res = s.Do(t, http.MethodPatch, "/v1/webhook-endpoints/"+created.ID.String(),
		map[string]any{"enabled": false, "event_types": []string{"dead_letter.created"}}, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var updated httpapi.WebhookEndpoint
	res.JSON(t, &updated)
	assert.False(t, updated.Enabled)
	assert.Equal(t, []string{"dead_letter.created"}, updated.EventTypes)
	assert.Equal(t, created.URL, updated.URL)

	res = s.Do(t, http.MethodPost, "/v1/webhook-endpoints/"+created.ID.String()+"/rotate-secret", nil, map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var rotated httpapi.WebhookEndpointCreated
	res.JSON(t, &rotated)
	require.True(t, strings.HasPrefix(rotated.Secret, "whsec_"))
	assert.NotEqual(t, created.Secret, rotated.Secret)
	assert.Equal(t, 2, rotated.SigningKeyVersion)
	require.NotNil(t, rotated.PreviousKeyExpiresAt)
	secrets = append(secrets, rotated.Secret)

	// The replaced secret revoked now, not at the end of its overlap; a
	// repeat answers the same.
	for range 2 {
		res = s.Do(t, http.MethodDelete, "/v1/webhook-endpoints/"+created.ID.String()+"/previous-secret", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		var revoked httpapi.WebhookEndpoint
		res.JSON(t, &revoked)
		assert.Nil(t, revoked.PreviousKeyExpiresAt)
		assert.Equal(t, 2, revoked.SigningKeyVersion)
	}

	res = s.Do(t, http.MethodDelete, "/v1/webhook-endpoints/"+created.ID.String(), nil, nil)
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	res = s.Do(t, http.MethodDelete, "/v1/webhook-endpoints/"+created.ID.String(), nil, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	res = s.Do(t, http.MethodGet, "/v1/webhook-endpoints/"+created.ID.String(), nil, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	res = s.Do(t, http.MethodGet, "/v1/webhook-endpoints/"+created.ID.String()+"/deliveries", nil, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)

	// No secret in any log line, nor in a column as plaintext (the secret
	// scan of every apitest server looks for whsec_ too).
	for _, secret := range secrets {
		assert.NotContains(t, s.Logs.String(), strings.TrimPrefix(secret, "whsec_"))
	}
}

func TestWebhookEndpointsAreForAdminsOnly(t *testing.T) {
	s := apitest.Memory(t)
	s.Resolver.Set("hooks.example.com", "93.184.215.14")
	res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints",
		map[string]any{"url": "https://hooks.example.com/once", "event_types": []string{"operation.failed"}},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var created httpapi.WebhookEndpointCreated
	res.JSON(t, &created)

	member := uuid.New()
	res = s.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": member, "role": "member"}, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	asMember := map[string]string{"Authorization": "Bearer " + s.TokenFor(t, s.Workspace, member)}
	id := created.ID.String()
	for _, req := range []struct {
		method, path string
		body         any
		key          bool
	}{
		{http.MethodPost, "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/x", "event_types": []string{"operation.failed"}}, true},
		{http.MethodGet, "/v1/webhook-endpoints", nil, false},
		{http.MethodGet, "/v1/webhook-endpoints/" + id, nil, false},
		{http.MethodGet, "/v1/webhook-endpoints/" + id + "/deliveries", nil, false},
		{http.MethodPatch, "/v1/webhook-endpoints/" + id, map[string]any{"enabled": false}, false},
		{http.MethodPost, "/v1/webhook-endpoints/" + id + "/rotate-secret", nil, true},
		{http.MethodDelete, "/v1/webhook-endpoints/" + id + "/previous-secret", nil, false},
		{http.MethodDelete, "/v1/webhook-endpoints/" + id, nil, false},
	} {
		headers := map[string]string{"Authorization": asMember["Authorization"]}
		if req.key {
			headers["Idempotency-Key"] = uuid.NewString()
		}
		res := s.Do(t, req.method, req.path, req.body, headers)
		assert.Equal(t, http.StatusForbidden, res.Status, "%s %s: %s", req.method, req.path, res.Body)
	}
}

func TestWebhookEndpointURLsPassTheFetchPolicy(t *testing.T) {
	s := apitest.Memory(t)
	s.Resolver.Set("internal.example.com", "10.0.0.7")
	for _, url := range []string{"http://127.0.0.1:9/x", "http://169.254.169.254/latest", "https://internal.example.com/x", "file:///etc/passwd"} {
		res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints",
			map[string]any{"url": url, "event_types": []string{"operation.failed"}},
			map[string]string{"Idempotency-Key": uuid.NewString()})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", url, res.Body)
		assert.NotContains(t, string(res.Body), url, "the URL is not repeated")
	}
	res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints",
		map[string]any{"url": "https://hooks.example.com/x", "event_types": []string{"operation.exploded"}},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	assert.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
}
