package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShownOnceFieldsAreLeftOutOfTheSavedBody: the saved copy of an answer
// lacks its shown:"once" fields, the answer sent keeps them, and an
// answer type with an unmarked secret-named field (or a marked one the
// copy would share) does not register.
func TestShownOnceFieldsAreLeftOutOfTheSavedBody(t *testing.T) {
	sent := WebhookEndpointCreated{WebhookEndpoint: WebhookEndpoint{URL: "https://example.com/?sig=abc"}, Secret: "whsec_abc"}
	raw, err := savedBody(sent)
	require.NoError(t, err)
	var saved map[string]any
	require.NoError(t, json.Unmarshal(raw, &saved))
	assert.NotContains(t, saved, "secret")
	assert.Equal(t, "https://example.com/?sig=abc", saved["url"], "a URL is saved as the tenant gave it")
	assert.Equal(t, "whsec_abc", sent.Secret, "the answer sent keeps it")

	type unmarked struct {
		APIKey string `json:"api_key"`
	}
	type shared struct {
		Inner *struct {
			Secret string `json:"secret" shown:"once"`
		} `json:"inner"`
	}
	type ordinary struct {
		Name     string            `json:"name"`
		Metadata map[string]string `json:"metadata"`
	}
	assert.PanicsWithValue(t, `httpapi: answer field $.api_key reads like a secret: tag it shown:"once" so no saved response keeps it`,
		func() { checkShownOnce(reflect.TypeFor[unmarked]()) })
	assert.Panics(t, func() { checkShownOnce(reflect.TypeFor[[]unmarked]()) }, "in a list too")
	assert.Panics(t, func() { checkShownOnce(reflect.TypeFor[shared]()) })
	assert.NotPanics(t, func() { checkShownOnce(reflect.TypeFor[ordinary]()) })
	assert.NotPanics(t, func() { checkShownOnce(reflect.TypeFor[WebhookEndpointCreated]()) })
}
