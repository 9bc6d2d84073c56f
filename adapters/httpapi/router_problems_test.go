package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain"
)

// TestRouterAnswersAreProblems: a path with no route and a method a route
// does not take are problem+json with a code and a type naming it, like
// every other error.
func TestRouterAnswersAreProblems(t *testing.T) {
	ts := newSpecServer(t)
	for _, tc := range []struct {
		method, path string
		status       int
		code         domain.Code
	}{
		{http.MethodGet, "/v1/no-such-thing", http.StatusNotFound, domain.CodeNotFound},
		{http.MethodDelete, "/v1/stores", http.StatusMethodNotAllowed, domain.CodeMethodNotAllowed},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, nil)
			require.NoError(t, err)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			require.Equal(t, tc.status, res.StatusCode)
			assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			var p httpapi.Problem
			require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
			assert.Equal(t, string(tc.code), p.Code)
			assert.Equal(t, tc.status, p.Status)
			assert.Equal(t, httpapi.ProblemType(tc.code), p.Type)
			assert.False(t, p.RetrySameKey)
			if tc.status == http.StatusMethodNotAllowed {
				assert.Contains(t, res.Header.Get("Allow"), http.MethodPost)
			}
		})
	}
}
