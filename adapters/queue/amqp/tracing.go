package amqp

import (
	"context"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/domain"
)

// instrumentation names the tracer of the publisher's spans.
const instrumentation = "github.com/oncehq/once/adapters/queue/amqp"

// startPublish starts the client span of one publish call: the messages
// sent to the exchange and their confirms awaited, under the span of the
// first message (its context). The producer span of each message is the
// caller's (adapters/tracing).
func (p *Publisher) startPublish(ctx context.Context, exchange string, msgs []*message.Message) (context.Context, func(error)) {
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemRabbitMQ,
		semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName("basic.publish"),
		semconv.MessagingDestinationName(exchange),
	}
	if len(msgs) == 1 {
		attrs = append(attrs, semconv.MessagingMessageID(msgs[0].UUID))
	} else {
		attrs = append(attrs, semconv.MessagingBatchMessageCount(len(msgs)))
	}
	ctx, span := p.tracer.Start(ctx, "basic.publish "+exchange, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil {
			// Sanitized: span attributes reach a collector outside.
			span.SetStatus(codes.Error, domain.SanitizeError(err))
		}
		span.End()
	}
}
