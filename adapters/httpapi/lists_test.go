package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/testsupport/apitest"
)

// TestListStoresPagesNewestFirst drives a list end to end: pages by limit
// and starting_after with has_more, a filter, and a refused limit. Every
// list shares the code (registerList, pagination.List, the repositories'
// listNewest, whose contract covers all seven).
func TestListStoresPagesNewestFirst(t *testing.T) {
	s := apitest.Memory(t)
	apiKey, apiSecret := apitest.TestCredentials()
	var created []string
	for _, platform := range []string{"shopify", "amazon", "shopify"} {
		res := s.Do(t, http.MethodPost, "/v1/stores", map[string]any{
			"platform": platform, "name": "List shop", "external_shop_id": "list-" + uuid.NewString(),
			"credentials": map[string]string{"api_key": apiKey, "api_secret": apiSecret},
		}, map[string]string{"Idempotency-Key": uuid.NewString()})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		var body httpapi.StoreCreated
		res.JSON(t, &body)
		created = append(created, body.Store.ID.String())
	}

	var first httpapi.ListOf[httpapi.Store]
	res := s.Do(t, http.MethodGet, "/v1/stores?limit=2", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.JSON(t, &first)
	require.Len(t, first.Items, 2)
	assert.True(t, first.HasMore)

	var second httpapi.ListOf[httpapi.Store]
	res = s.Do(t, http.MethodGet, "/v1/stores?limit=2&starting_after="+first.Items[1].ID.String(), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.JSON(t, &second)
	require.Len(t, second.Items, 1)
	assert.False(t, second.HasMore)

	var seen []string
	for _, st := range append(first.Items, second.Items...) {
		seen = append(seen, st.ID.String())
	}
	assert.ElementsMatch(t, created, seen, "the pages hold every store once")
	for i := 1; i < len(seen); i++ {
		assert.Greater(t, seen[i-1], seen[i], "newest (largest id) first")
	}

	var amazon httpapi.ListOf[httpapi.Store]
	res = s.Do(t, http.MethodGet, "/v1/stores?platform=amazon", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.JSON(t, &amazon)
	require.Len(t, amazon.Items, 1)
	assert.Equal(t, created[1], amazon.Items[0].ID.String())

	res = s.Do(t, http.MethodGet, "/v1/stores?limit=101", nil, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.Status)
	assert.Equal(t, "VALIDATION_FAILED", res.Problem(t).Code)

	for _, path := range []string{"/v1/products", "/v1/media", "/v1/publications", "/v1/syncs", "/v1/material-transfers", "/v1/ai-tasks"} {
		res := s.Do(t, http.MethodGet, path, nil, nil)
		assert.Equal(t, http.StatusOK, res.Status, "%s: %s", path, res.Body)
		assert.JSONEq(t, `{"items":[],"has_more":false}`, string(res.Body), path)
	}
}
