package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/ports"
)

// Messaging says which broker carries the messages, for the attributes the
// OpenTelemetry semantic conventions give messaging spans.
type Messaging struct {
	// System is messaging.system: "redis", "rabbitmq", "bullmq" or
	// "gochannel" (the memory queue).
	System string
	// Destination is messaging.destination.name of an event type: the
	// stream, exchange or queue its messages go to, as the broker names it
	// (the namespace included). Nil: the event type.
	Destination func(eventType string) string
}

func (m Messaging) destination(eventType string) string {
	if m.Destination == nil {
		return eventType
	}
	return m.Destination(eventType)
}

// attributes describe message msg on a span of operation (its type and
// its name, e.g. send and publish).
func (m Messaging) attributes(msg ports.Message, destination string, operationType attribute.KeyValue, operationName string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		operationType,
		semconv.MessagingOperationName(operationName),
		semconv.MessagingDestinationName(destination),
		semconv.MessagingMessageID(msg.ID.String()),
		attribute.String("once.event_type", msg.Type),
		attribute.String("once.workspace_id", msg.WorkspaceID.String()),
	}
	if m.System != "" {
		attrs = append(attrs, semconv.MessagingSystemKey.String(m.System))
	}
	return attrs
}

// messagingSpans starts the spans of one side of a broker, producer or
// consumer: the Publisher's and the Handler's.
type messagingSpans struct {
	tracer    trace.Tracer
	messaging Messaging
}

func newMessagingSpans(tp trace.TracerProvider, m Messaging) messagingSpans {
	return messagingSpans{tracer: tp.Tracer(instrumentation), messaging: m}
}

// start starts the span of msg named operation ("publish", "process") and
// its destination, child of the span msg's traceparent names, if any.
func (s messagingSpans) start(ctx context.Context, msg ports.Message, kind trace.SpanKind, operationType attribute.KeyValue, operation string) (context.Context, trace.Span) {
	destination := s.messaging.destination(msg.Type)
	return s.tracer.Start(withParent(ctx, msg.Traceparent), operation+" "+destination,
		trace.WithSpanKind(kind),
		trace.WithAttributes(s.messaging.attributes(msg, destination, operationType, operation)...))
}
