package httpapi

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/domain"
)

// traceContext carries the W3C traceparent of the request into the context,
// from where the use cases copy it onto the outbox events they write, so the
// worker's span can join the request's trace. With tracing on it is the
// server span's; otherwise the client's header, passed on as it came.
func traceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp := r.Header.Get("traceparent")
		if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
			carrier := propagation.MapCarrier{}
			propagation.TraceContext{}.Inject(r.Context(), carrier)
			tp = carrier.Get("traceparent")
		}
		if tp != "" {
			r = r.WithContext(domain.WithTraceparent(r.Context(), tp))
		}
		next.ServeHTTP(w, r)
	})
}

// serverSpans makes a server span per request, named by its route pattern
// ("POST /v1/stores") with the route as http.route, child of the client's
// traceparent when it sent one. Without a tracer provider it is not
// installed at all: tracing off costs nothing.
func serverSpans(mux *http.ServeMux, tp trace.TracerProvider, next http.Handler) http.Handler {
	if tp == nil {
		return next
	}
	routed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No route keeps the method alone as the name, so unknown paths
		// do not each make a span name of their own.
		if _, pattern := mux.Handler(r); pattern != "" {
			span := trace.SpanFromContext(r.Context())
			span.SetName(pattern)
			if _, route, ok := strings.Cut(pattern, " "); ok {
				span.SetAttributes(semconv.HTTPRoute(route))
			}
		}
		next.ServeHTTP(w, r)
	})
	return otelhttp.NewHandler(routed, "http",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if r.Pattern != "" {
				return r.Pattern
			}
			return r.Method
		}))
}
