package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
)

// TestListStoresPagesNewestFirst drives a list end to end: pages by limit
// and starting_after with has_more, a filter, and a refused limit. Every
// list shares the code (registerList, pagination.List, the repositories'
// listNewest, whose contract covers all seven).
func TestListStoresPagesNewestFirst(t *testing.T) {
	s := apitest.Memory(t)
	var created []string
	for _, c := range createStores(t, s, "shopify", "amazon", "shopify") {
		created = append(created, c.Store.ID.String())
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
}

// TestEveryListAnswersAnEmptyPage: every list route of the API (the
// members list aside: the caller is a member) answers a workspace with
// nothing in it an empty first page.
func TestEveryListAnswersAnEmptyPage(t *testing.T) {
	s := apitest.Memory(t)
	lists := 0
	for path, item := range httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}).OpenAPI().Paths {
		op := item.Get
		if op == nil || !strings.HasPrefix(op.OperationID, "list") || strings.Contains(path, "{") || op.OperationID == "listMembers" {
			continue
		}
		lists++
		res := s.Do(t, http.MethodGet, path, nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s: %s", path, res.Body)
		var page struct {
			Items   []any `json:"items"`
			HasMore *bool `json:"has_more"`
		}
		res.JSON(t, &page)
		assert.NotNil(t, page.Items, "%s: items is a list, [] when empty: %s", path, res.Body)
		assert.Empty(t, page.Items, path)
		if assert.NotNil(t, page.HasMore, path) {
			assert.False(t, *page.HasMore, path)
		}
	}
	assert.GreaterOrEqual(t, lists, len(kinds.All), "a list per kind at least")
}

// createStores creates a store per platform; each starts a store.verify
// operation and writes its event.
func createStores(t *testing.T, s *apitest.Server, platforms ...string) []httpapi.StoreCreated {
	t.Helper()
	apiKey, apiSecret := apitest.TestCredentials()
	var created []httpapi.StoreCreated
	for _, platform := range platforms {
		res := s.Do(t, http.MethodPost, "/v1/stores", map[string]any{
			"platform": platform, "name": "List shop", "external_shop_id": "list-" + uuid.NewString(),
			"credentials": map[string]string{"api_key": apiKey, "api_secret": apiSecret},
		}, map[string]string{"Idempotency-Key": uuid.NewString()})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		var body httpapi.StoreCreated
		res.JSON(t, &body)
		created = append(created, body)
	}
	return created
}

// walk reads a list page after page, limit items a page, following
// starting_after while has_more, and returns the ids in the order read.
// Every page but the last is full; the last says has_more false.
func walk(t *testing.T, s *apitest.Server, path string, limit int) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 100 {
		url := path + "?limit=" + strconv.Itoa(limit)
		if cursor != "" {
			url += "&starting_after=" + cursor
		}
		res := s.Do(t, http.MethodGet, url, nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s: %s", url, res.Body)
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
			HasMore bool `json:"has_more"`
		}
		res.JSON(t, &page)
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if !page.HasMore {
			return ids
		}
		require.Len(t, page.Items, limit, "%s: a page with has_more is full", url)
		cursor = page.Items[len(page.Items)-1].ID
	}
	t.Fatalf("%s: has_more never ended", path)
	return nil
}

// requireNewestFirst checks ids run largest (newest UUIDv7) first.
func requireNewestFirst(t *testing.T, ids []string) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		require.Greater(t, ids[i-1], ids[i], "newest (largest id) first")
	}
}

// The operations list has the shared shape, and the cursor of the release
// before (before, next_before) still works for one more release.
func TestListOperationsPagesAndKeepsBeforeForOneRelease(t *testing.T) {
	s := apitest.Memory(t)
	var want []string
	for _, c := range createStores(t, s, "shopify", "amazon", "shopify", "amazon", "shopify") {
		want = append(want, c.Operation.ID.String())
	}

	got := walk(t, s, "/v1/operations", 2)
	assert.ElementsMatch(t, want, got, "every operation once")
	requireNewestFirst(t, got)

	// before, deprecated, is starting_after; next_before is the last id
	// while has_more, absent on the last page.
	var first, second httpapi.OperationList
	res := s.Do(t, http.MethodGet, "/v1/operations?limit=3", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.JSON(t, &first)
	require.True(t, first.HasMore)
	assert.Equal(t, first.Items[2].ID.String(), first.NextBefore)
	res = s.Do(t, http.MethodGet, "/v1/operations?limit=3&before="+first.NextBefore, nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.JSON(t, &second)
	assert.False(t, second.HasMore)
	assert.Empty(t, second.NextBefore)
	var paged []string
	for _, op := range append(first.Items, second.Items...) {
		paged = append(paged, op.ID.String())
	}
	assert.Equal(t, got, paged, "before pages as starting_after does")
	res = s.Do(t, http.MethodGet, "/v1/operations?limit=3&before="+first.NextBefore+"&starting_after="+first.NextBefore, nil, nil)
	assert.Equal(t, http.StatusOK, res.Status, "the same cursor under both names: %s", res.Body)
	res = s.Do(t, http.MethodGet, "/v1/operations?before="+first.NextBefore+"&starting_after="+first.Items[0].ID.String(), nil, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.Status, "two different cursors: %s", res.Body)

	for _, bad := range []string{"0", "101", "-1"} {
		res := s.Do(t, http.MethodGet, "/v1/operations?limit="+bad, nil, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.Status, "limit=%s", bad)
	}
	res = s.Do(t, http.MethodGet, "/v1/operations?limit=100&status=pending", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var all httpapi.OperationList
	res.JSON(t, &all)
	assert.Len(t, all.Items, len(want))
	assert.False(t, all.HasMore)
}

// Dead letters have the shared shape; the groups are the page's.
func TestListDeadLettersPages(t *testing.T) {
	s := apitest.Memory(t)
	createStores(t, s, "shopify", "amazon", "shopify", "amazon", "shopify")
	var want []string
	for i, e := range s.Events(t) {
		if i == 0 {
			continue // one event stays out of the dead letters
		}
		require.NoError(t, s.UoW.Transact(context.Background(), s.Workspace, func(ctx context.Context, tx ports.Tx) error {
			_, err := tx.Outbox().DeadLetterJob(ctx, e.ID, 1, "the job failed: platform unavailable")
			return err
		}))
		want = append(want, e.ID.String())
	}

	got := walk(t, s, "/v1/outbox/dead-letters", 3)
	assert.ElementsMatch(t, want, got, "every dead letter once")
	requireNewestFirst(t, got)

	var page httpapi.DeadLetterList
	res := s.Do(t, http.MethodGet, "/v1/outbox/dead-letters?limit=3", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.JSON(t, &page)
	assert.True(t, page.HasMore)
	require.Len(t, page.Groups, 1)
	assert.Equal(t, 3, page.Groups[0].Count, "the groups are the page's")

	for _, bad := range []string{"0", "101"} {
		res := s.Do(t, http.MethodGet, "/v1/outbox/dead-letters?limit="+bad, nil, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.Status, "limit=%s", bad)
	}
}
