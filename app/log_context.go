package app

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain"
)

// WithRequestContext makes every line logged with a context name the
// request and the trace it belongs to: request_id (the HTTP request's
// X-Request-Id), trace_id and span_id (the span in the context: a server,
// producer or consumer span). Without a span, a traceparent the request
// brought still gives its trace_id, so lines can be followed with tracing
// off. Lines logged without a context (log.Info rather than
// log.InfoContext) carry none.
//
// After WithGroup the attributes land inside the group, as any attribute
// added at Handle does.
func WithRequestContext(h slog.Handler) slog.Handler { return requestContextHandler{h} }

type requestContextHandler struct{ slog.Handler }

func (h requestContextHandler) Handle(ctx context.Context, r slog.Record) error {
	var attrs [3]slog.Attr
	n := 0
	if id := httpapi.RequestIDFrom(ctx); id != "" {
		attrs[n] = slog.String("request_id", id)
		n++
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		attrs[n] = slog.String("trace_id", sc.TraceID().String())
		attrs[n+1] = slog.String("span_id", sc.SpanID().String())
		n += 2
	} else if tp := domain.TraceparentFrom(ctx); tp != "" {
		// version-traceid-parentid-flags, validated on the way in.
		attrs[n] = slog.String("trace_id", tp[3:35])
		n++
	}
	if n > 0 {
		// The record's attributes may be shared with its caller's copy.
		r = r.Clone()
		r.AddAttrs(attrs[:n]...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestContextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestContextHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestContextHandler) WithGroup(name string) slog.Handler {
	return requestContextHandler{h.Handler.WithGroup(name)}
}
