package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
)

// TestOrdinaryNamesAreSavedAndReplayed: names a tenant chooses that read
// like the start of a credential (a filename "Basic plan.png", a store
// "Bearer Bros shop", a webhook URL whose query carries sig=, as Azure
// Logic Apps URLs do) are answered 201 and replayed like any other: the
// saved response of an idempotent create is built by the service, which
// leaves out what it must not keep, rather than scanned for patterns that
// ordinary text matches. On the memory store and on PostgreSQL.
func TestOrdinaryNamesAreSavedAndReplayed(t *testing.T) {
	apitest.OnEachStore(t, func(t *testing.T, s *apitest.Server) {
		s.Resolver.Set("prod-12.westeurope.logic.azure.com", "93.184.215.14")
		apiKey, apiSecret := apitest.TestCredentials()
		creates := map[string]struct {
			path string
			body map[string]any
		}{
			"media": {"/v1/media", map[string]any{"filename": "Basic plan.png", "content_type": "image/png", "size_bytes": 10}},
			"store": {"/v1/stores", map[string]any{
				"platform": "shopify", "name": "Bearer Bros shop", "external_shop_id": "bearer-" + uuid.NewString(),
				"credentials": map[string]string{"api_key": apiKey, "api_secret": apiSecret},
			}},
			"webhook endpoint": {"/v1/webhook-endpoints", map[string]any{
				"url":         "https://prod-12.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=2016-10-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=abc123",
				"event_types": []string{"operation.succeeded"},
			}},
		}
		for what, c := range creates {
			key := map[string]string{"Idempotency-Key": uuid.NewString()}
			res := s.Do(t, http.MethodPost, c.path, c.body, key)
			require.Equal(t, http.StatusCreated, res.Status, "%s: %s", what, res.Body)
			replay := s.Do(t, http.MethodPost, c.path, c.body, key)
			require.Equal(t, http.StatusCreated, replay.Status, "%s replayed: %s", what, replay.Body)
			assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"), what)
		}
		assert.NotContains(t, s.Logs.String(), `"level":"ERROR"`, "an ordinary name is not an error")
	})
}
