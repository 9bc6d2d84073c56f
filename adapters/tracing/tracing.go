// Package tracing is the OpenTelemetry adapter: a tracer provider built from
// the standard OTEL_* variables, and the producer and consumer spans that
// carry a request's trace through the outbox, the broker and the worker.
//
// An outbox event carries the W3C traceparent of the request that wrote it
// (domain.WithTraceparent). The Publisher starts a producer span as a child
// of that request's span and hands the broker the producer span's
// traceparent instead; the worker's Handler starts a consumer span as its
// child. One trace then reads request → publish → job.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/domain"
)

// instrumentation names the tracer of the spans made here.
const instrumentation = "github.com/oncehq/once/adapters/tracing"

var propagator = propagation.TraceContext{}

// withParent returns ctx with the remote span of traceparent as its parent
// span, or ctx unchanged when traceparent is empty or invalid.
func withParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// traceparentOf is the W3C traceparent of the span in ctx, or "".
func traceparentOf(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// fail marks span failed with err, sanitized: span attributes reach a
// collector outside, so no internal address or credential goes with them.
func fail(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.SetStatus(codes.Error, domain.SanitizeError(err))
}
