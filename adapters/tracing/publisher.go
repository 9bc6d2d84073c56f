package tracing

import (
	"context"

	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/ports"
)

// Publisher decorates a ports.Publisher with one producer span per message,
// child of the request that wrote the event, and sends the producer span's
// traceparent on with the message so the consumer joins the same trace.
type Publisher struct {
	next  ports.Publisher
	spans messagingSpans
}

var _ ports.Publisher = (*Publisher)(nil)

// NewPublisher wraps next, which publishes to the broker m describes.
func NewPublisher(next ports.Publisher, tp trace.TracerProvider, m Messaging) *Publisher {
	return &Publisher{next: next, spans: newMessagingSpans(tp, m)}
}

// Publish publishes msgs through the wrapped publisher in one call, as it
// was asked to, each message under a span of its own ("publish" and its
// destination): a batch mixes the events of many requests, so of many
// traces. The broker's own spans of the call (a Redis pipeline, an AMQP
// publish) join the trace of the first message: the call's context carries
// its span.
func (p *Publisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	traced := make([]ports.Message, len(msgs))
	spans := make([]trace.Span, len(msgs))
	callCtx := ctx
	for i, m := range msgs {
		spanCtx, span := p.spans.start(ctx, m, trace.SpanKindProducer, semconv.MessagingOperationTypeSend, "publish")
		m.Traceparent = traceparentOf(spanCtx)
		traced[i], spans[i] = m, span
		if i == 0 {
			callCtx = spanCtx
		}
	}
	err := p.next.Publish(callCtx, traced...)
	for _, span := range spans {
		fail(span, err)
		span.End()
	}
	return err
}
