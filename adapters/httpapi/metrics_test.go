package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
)

type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) ObserveRequest(method, route string, status int, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, method+" "+route+" "+strconv.Itoa(status))
}

// The route label is the path pattern alone, the method a label of its
// own; paths without a route, and made-up methods, make no series each.
func TestRequestMetricsLabelMethodAndRouteApart(t *testing.T) {
	mux := http.NewServeMux()
	httpapi.NewAPI(mux, httpapi.Deps{})
	obs := &requestLog{}
	ts := httptest.NewServer(httpapi.Handler(mux, slog.New(slog.DiscardHandler), obs))
	defer ts.Close()

	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/v1/operations/0193a3b4-7c2d-7e8f-9a0b-1c2d3e4f5a6b"},
		{http.MethodPost, "/v1/stores"},
		{http.MethodGet, "/v1/no-such-thing"},
		{"BREW", "/v1/stores"},
	} {
		req, err := http.NewRequest(r.method, ts.URL+r.path, nil)
		require.NoError(t, err)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
	}
	ts.Close()
	assert.Equal(t, []string{
		"GET /v1/operations/{id} 401",
		"POST /v1/stores 400", // no Idempotency-Key
		"GET unmatched 404",
		"other unmatched 405",
	}, obs.seen)
}
