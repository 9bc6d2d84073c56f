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
	next  ports.MessageHandler
	spans messagingSpans
}

var _ ports.MessageHandler = (*Handler)(nil)

// NewHandler wraps next, which handles the messages of the broker m
// describes.
func NewHandler(next ports.MessageHandler, tp trace.TracerProvider, m Messaging) *Handler {
	return &Handler{next: next, spans: newMessagingSpans(tp, m)}
}

// Handle runs the wrapped handler inside the consumer span ("process" and
// the destination the message came from). The span's traceparent replaces
// the message's in ctx, so events the job writes continue the same trace;
// the statements the job runs are its children.
func (h *Handler) Handle(ctx context.Context, msg ports.Message) error {
	ctx, span := h.spans.start(ctx, msg, trace.SpanKindConsumer, semconv.MessagingOperationTypeProcess, "process")
	defer span.End()
	err := h.next.Handle(domain.WithTraceparent(ctx, traceparentOf(ctx)), msg)
	fail(span, err)
	return err
}
