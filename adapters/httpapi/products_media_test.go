package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/testsupport/apitest"
)

// TestProductsNameExistingMediaInCanonicalForm: a product's media_ids are
// read in the one textual form of a UUID (hyphenated, either case) and
// must name media of the workspace; anything else is a 422 naming the
// item, VALIDATION_FAILED for the form and REFERENCE_NOT_FOUND for an id
// no media has, on create and on save alike, and nothing is written. On
// the memory store and on PostgreSQL.
func TestProductsNameExistingMediaInCanonicalForm(t *testing.T) {
	apitest.OnEachStore(t, func(t *testing.T, s *apitest.Server) {
		media := registerMedia(t, s)
		product := func(ids ...string) map[string]any {
			return map[string]any{"title": "Mug", "price_minor": 1299, "currency": "EUR", "media_ids": ids}
		}

		res := s.Do(t, http.MethodPost, "/v1/products", product(strings.ToUpper(media.String())), nil)
		require.Equal(t, http.StatusCreated, res.Status, "upper case is the same id: %s", res.Body)
		var created httpapi.Product
		res.JSON(t, &created)
		assert.Equal(t, []uuid.UUID{media}, created.MediaIDs)

		refused := map[string]struct {
			body map[string]any
			code string
		}{
			"braced":      {product(media.String(), "{"+media.String()+"}"), "VALIDATION_FAILED"},
			"urn":         {product(media.String(), "urn:uuid:"+media.String()), "VALIDATION_FAILED"},
			"hyphen-less": {product(media.String(), strings.ReplaceAll(media.String(), "-", "")), "VALIDATION_FAILED"},
			"unknown":     {product(media.String(), uuid.NewString()), "REFERENCE_NOT_FOUND"},
		}
		for name, c := range refused {
			for _, write := range []struct{ method, path string }{
				{http.MethodPost, "/v1/products"},
				{http.MethodPut, "/v1/products/" + created.ID.String()},
			} {
				res := s.Do(t, write.method, write.path, c.body, map[string]string{"If-Match": `"1"`})
				require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s: %s", write.method, name, res.Body)
				p := res.Problem(t)
				assert.Equal(t, c.code, p.Code, "%s %s", write.method, name)
				assert.Contains(t, p.Locations(), "body.media_ids[1]", "%s %s", write.method, name)
			}
		}

		var list httpapi.ListOf[httpapi.Product]
		s.Do(t, http.MethodGet, "/v1/products", nil, nil).JSON(t, &list)
		require.Len(t, list.Items, 1, "refused creates write nothing")
		assert.Equal(t, 1, list.Items[0].Revision, "refused saves change nothing")
	})
}

// registerMedia registers a media record through the API and returns its
// id.
func registerMedia(t *testing.T, s *apitest.Server) uuid.UUID {
	t.Helper()
	res := s.Do(t, http.MethodPost, "/v1/media",
		map[string]any{"filename": "mug.png", "content_type": "image/png", "size_bytes": 10},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var registered httpapi.MediaRegistered
	res.JSON(t, &registered)
	return registered.Media.ID
}
