package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/ports"
)

// Publisher decorates a ports.Publisher with one producer span per message,
// child of the request that wrote the event, and sends the producer span's
// traceparent on with the message so the consumer joins the same trace.
type Publisher struct {
	next   ports.Publisher
	tracer trace.Tracer
}

var _ ports.Publisher = (*Publisher)(nil)

// NewPublisher wraps next.
func NewPublisher(next ports.Publisher, tp trace.TracerProvider) *Publisher {
	return &Publisher{next: next, tracer: tp.Tracer(instrumentation)}
}

// Publish publishes msgs through the wrapped publisher in one call, as it
// was asked to, each message under a span of its own: a batch mixes the
// events of many requests, so of many traces.
func (p *Publisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	traced := make([]ports.Message, len(msgs))
	spans := make([]trace.Span, len(msgs))
	for i, m := range msgs {
		spanCtx, span := p.tracer.Start(withParent(ctx, m.Traceparent), "publish "+m.Type,
			trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(messageAttributes(m, semconv.MessagingOperationTypeSend)...))
		m.Traceparent = traceparentOf(spanCtx)
		traced[i], spans[i] = m, span
	}
	err := p.next.Publish(ctx, traced...)
	for _, span := range spans {
		fail(span, err)
		span.End()
	}
	return err
}

// messageAttributes describe a message on its producer or consumer span.
func messageAttributes(m ports.Message, operation attribute.KeyValue) []attribute.KeyValue {
	return []attribute.KeyValue{
		operation,
		semconv.MessagingDestinationName(m.Type),
		semconv.MessagingMessageID(m.ID.String()),
		attribute.String("once.workspace_id", m.WorkspaceID.String()),
	}
}
