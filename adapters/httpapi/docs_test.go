package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
)

// newSpecServer serves the API with zero Deps: enough for the docs, the
// spec and the router's own answers, none of which touch a use case.
func newSpecServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	httpapi.NewAPI(mux, httpapi.Deps{})
	ts := httptest.NewServer(httpapi.Handler(mux, slog.New(slog.DiscardHandler), nil))
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, u string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

// assetRef finds what a page loads: scripts, stylesheets, icons.
var assetRef = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

// TestDocsServeOfflineWithEveryAsset fetches /docs and everything it
// references from the server itself: every reference is local (no CDN) and
// answers 200 with a body, so the reference renders without internet.
func TestDocsServeOfflineWithEveryAsset(t *testing.T) {
	ts := newSpecServer(t)
	base, err := url.Parse(ts.URL + httpapi.DocsPath + "/")
	require.NoError(t, err)

	res, page := get(t, ts.URL+httpapi.DocsPath)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", page)
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")
	require.Contains(t, string(page), "/openapi.json", "the page reads the spec this server serves")

	refs := assetRef.FindAllStringSubmatch(string(page), -1)
	require.GreaterOrEqual(t, len(refs), 3, "the page loads its script and stylesheet: %s", page)
	for _, m := range refs {
		ref, err := url.Parse(m[1])
		require.NoError(t, err)
		abs := base.ResolveReference(ref)
		require.Equal(t, base.Host, abs.Host, "%s is loaded from another host: the docs would need internet", m[1])
		res, body := get(t, abs.String())
		assert.Equal(t, http.StatusOK, res.StatusCode, "%s", abs)
		assert.NotEmpty(t, body, "%s", abs)
	}

	res, spec := get(t, ts.URL+"/openapi.json")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(spec), `"openapi"`)
}
