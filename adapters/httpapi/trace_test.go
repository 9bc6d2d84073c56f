package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/adapters/httpapi"
)

// A server span per request, named by the route pattern; a path without a
// route is named by its method alone, so names stay few.
func TestServerSpansAreNamedByRoute(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	mux := http.NewServeMux()
	httpapi.NewAPI(mux, httpapi.Deps{})
	ts := httptest.NewServer(httpapi.Handler(mux, slog.New(slog.DiscardHandler), nil, httpapi.WithTracerProvider(tp)))
	defer ts.Close()

	for _, path := range []string{"/v1/operations", "/v1/no-such-thing-1", "/v1/no-such-thing-2"} {
		res, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		res.Body.Close()
	}
	ts.Close()
	var names []string
	for _, s := range exporter.GetSpans() {
		assert.Equal(t, trace.SpanKindServer, s.SpanKind)
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"GET /v1/operations", "GET", "GET"}, names)
}

// BenchmarkHandlerTracing compares one request through the whole handler
// chain with tracing off (the default: request id and log context only),
// on with nothing sampled, and on with every span recorded.
func BenchmarkHandlerTracing(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []httpapi.HandlerOption
	}{
		{"off", nil},
		{"on-never-sampled", []httpapi.HandlerOption{httpapi.WithTracerProvider(
			sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())))}},
		{"on-recorded", []httpapi.HandlerOption{httpapi.WithTracerProvider(
			sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter())))}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			mux := http.NewServeMux()
			httpapi.NewAPI(mux, httpapi.Deps{})
			h := httpapi.Handler(mux, slog.New(slog.DiscardHandler), nil, bc.opts...)
			req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
