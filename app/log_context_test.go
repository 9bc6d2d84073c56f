package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/app"
)

// With tracing off, a request's log lines still carry its request id and
// the trace id of the traceparent it brought; a line logged without a
// request context carries neither.
func TestLogLinesCarryTheRequestIDAndTraceIDWithTracingOff(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(app.WithRequestContext(slog.NewJSONHandler(&buf, nil)))
	mux := http.NewServeMux()
	httpapi.NewAPI(mux, httpapi.Deps{})
	ts := httptest.NewServer(httpapi.Handler(mux, log, nil))
	defer ts.Close()

	req, err := http.NewRequest(http.MethodGet, ts.URL+"/v1/no-such-thing", nil)
	require.NoError(t, err)
	req.Header.Set("X-Request-Id", "off-1")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	ts.Close() // the access log line is written before Close returns

	lines := jsonLines(t, buf.String())
	require.Len(t, lines, 1)
	assert.Equal(t, "http request", lines[0]["msg"])
	assert.Equal(t, "off-1", lines[0]["request_id"])
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", lines[0]["trace_id"])
	assert.NotContains(t, lines[0], "span_id", "no span was made")

	buf.Reset()
	log.InfoContext(context.Background(), "outside any request")
	lines = jsonLines(t, buf.String())
	require.Len(t, lines, 1)
	assert.NotContains(t, lines[0], "request_id")
	assert.NotContains(t, lines[0], "trace_id")
}

// A line logged inside a span names it, and the ids survive WithAttrs.
func TestLogLinesNameTheSpanInTheirContext(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(app.WithRequestContext(slog.NewJSONHandler(&buf, nil))).With("component", "worker")
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "job")
	log.InfoContext(ctx, "job done")
	span.End()
	lines := jsonLines(t, buf.String())
	require.Len(t, lines, 1)
	assert.Equal(t, "worker", lines[0]["component"])
	assert.Equal(t, span.SpanContext().TraceID().String(), lines[0]["trace_id"])
	assert.Equal(t, span.SpanContext().SpanID().String(), lines[0]["span_id"])
}
