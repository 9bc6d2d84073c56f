package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// ChildrenOnly wraps tp so that its tracers start a span only inside
// another one, and otherwise return ctx's non-recording span. The database
// and broker clients are wrapped so: the statements and commands of a
// request or a job join its trace, while the background ones that belong
// to no trace (a Dispatcher's poll every few milliseconds, a worker's
// blocking read, the cleanup) do not each become a trace of their own.
func ChildrenOnly(tp trace.TracerProvider) trace.TracerProvider {
	return childrenOnly{tp: tp}
}

type childrenOnly struct {
	embedded.TracerProvider
	tp trace.TracerProvider
}

func (p childrenOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childTracer{next: p.tp.Tracer(name, opts...)}
}

type childTracer struct {
	embedded.Tracer
	next trace.Tracer
}

func (t childTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.next.Start(ctx, name, opts...)
}
