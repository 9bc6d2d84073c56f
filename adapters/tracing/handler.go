package tracing

import (
	"context"

	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Handler decorates a worker's ports.MessageHandler with a consumer span
// per attempt, child of the producer span the message carries.
type Handler struct {
	next   ports.MessageHandler
	tracer trace.Tracer
}

var _ ports.MessageHandler = (*Handler)(nil)

// NewHandler wraps next.
func NewHandler(next ports.MessageHandler, tp trace.TracerProvider) *Handler {
	return &Handler{next: next, tracer: tp.Tracer(instrumentation)}
}

// Handle runs the wrapped handler inside the consumer span. The span's
// traceparent replaces the message's in ctx, so events the job writes
// continue the same trace.
func (h *Handler) Handle(ctx context.Context, msg ports.Message) error {
	ctx, span := h.tracer.Start(withParent(ctx, msg.Traceparent), "process "+msg.Type,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(messageAttributes(msg, semconv.MessagingOperationTypeProcess)...))
	defer span.End()
	err := h.next.Handle(domain.WithTraceparent(ctx, traceparentOf(ctx)), msg)
	fail(span, err)
	return err
}
