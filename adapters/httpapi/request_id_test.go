package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
)

// TestRequestIDIsAcceptedOrReplacedAndEchoed: a sane X-Request-Id comes
// back as sent; a missing, too long, unprintable or repeated one is
// replaced by a new UUID, never the same twice.
func TestRequestIDIsAcceptedOrReplacedAndEchoed(t *testing.T) {
	ts := newSpecServer(t)
	for _, tc := range []struct {
		name   string
		sent   []string
		echoed bool
	}{
		{"sane", []string{"req-42_ab.C~d:e@f+g=h/i"}, true},
		{"uuid", []string{"6f1c2d3e-4b5a-4697-8877-665544332211"}, true},
		{"128 characters", []string{strings.Repeat("a", 128)}, true},
		{"missing", nil, false},
		{"empty", []string{""}, false},
		{"129 characters", []string{strings.Repeat("a", 129)}, false},
		{"space", []string{"a b"}, false},
		{"quote", []string{`a"b`}, false},
		{"not ASCII", []string{"é"}, false},
		{"sent twice", []string{"one", "two"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 2 {
				req, err := http.NewRequest(http.MethodGet, ts.URL+"/healthz", nil)
				require.NoError(t, err)
				for _, v := range tc.sent {
					req.Header.Add(httpapi.RequestIDHeader, v)
				}
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				res.Body.Close()
				got := res.Header.Values(httpapi.RequestIDHeader)
				require.Len(t, got, 1)
				if tc.echoed {
					assert.Equal(t, tc.sent[0], got[0])
					continue
				}
				_, err = uuid.Parse(got[0])
				assert.NoError(t, err, "replacement %q is a UUID", got[0])
				assert.False(t, seen[got[0]], "a new id per request")
				seen[got[0]] = true
			}
		})
	}
}

// TestProblemsNameTheirRequest: every problem, whoever raised it (the
// router, huma's own validation, a handler), carries the request id in
// `instance`.
func TestProblemsNameTheirRequest(t *testing.T) {
	ts := newSpecServer(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"router", http.MethodGet, "/v1/no-such-thing", "", http.StatusNotFound},
		{"huma validation", http.MethodGet, "/v1/operations?limit=-5", "", http.StatusUnprocessableEntity},
		{"handler", http.MethodGet, "/v1/operations", "", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, sent := range []string{"", "client-chosen-id"} {
				req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
				require.NoError(t, err)
				if sent != "" {
					req.Header.Set(httpapi.RequestIDHeader, sent)
				}
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
				require.Equal(t, tc.status, res.StatusCode)
				id := res.Header.Get(httpapi.RequestIDHeader)
				require.NotEmpty(t, id)
				if sent != "" {
					require.Equal(t, sent, id)
				}
				var p httpapi.Problem
				require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
				assert.Equal(t, "urn:once:request:"+id, p.Instance)
			}
		})
	}
}
