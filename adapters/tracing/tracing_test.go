package tracing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/adapters/tracing"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

func TestEnabledOnlyWhenAnExporterIsConfigured(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "once-api"}, false},
	} {
		got := tracing.Enabled(func(k string) string { return tc.env[k] })
		assert.Equal(t, tc.want, got, "%v", tc.env)
	}
}

func newProvider(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exporter
}

type recordingPublisher struct {
	got  []ports.Message
	span trace.SpanContext // the span of the call's context
	err  error
}

func (p *recordingPublisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	p.got = append(p.got, msgs...)
	p.span = trace.SpanContextFromContext(ctx)
	return p.err
}

// redis is the broker of the tests: streams named with a namespace.
var redis = tracing.Messaging{System: "redis", Destination: func(eventType string) string { return "once." + eventType }}

// A batch of events from two requests: each message gets a producer span
// in its own request's trace, and carries that span on; the caller's
// messages are left as they were.
func TestPublisherMakesAProducerSpanPerMessageInItsRequestsTrace(t *testing.T) {
	tp, exporter := newProvider(t)
	next := &recordingPublisher{}
	const (
		a = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		b = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	msgs := []ports.Message{
		{ID: uuid.New(), Type: "store.credentials.verify", Traceparent: a},
		{ID: uuid.New(), Type: "media.process", Traceparent: b},
		{ID: uuid.New(), Type: "media.process"},
	}
	require.NoError(t, tracing.NewPublisher(next, tp, redis).Publish(context.Background(), msgs...))

	assert.Equal(t, a, msgs[0].Traceparent, "the caller's messages are not changed")
	spans := exporter.GetSpans()
	require.Len(t, spans, 3)
	require.Len(t, next.got, 3)
	for i, want := range []struct{ trace, parent string }{
		{"4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"},
		{"", ""},
	} {
		s := spans[i]
		assert.Equal(t, trace.SpanKindProducer, s.SpanKind)
		assert.Equal(t, "publish once."+msgs[i].Type, s.Name, "named by the stream")
		assert.Subset(t, s.Attributes, []attribute.KeyValue{
			attribute.String("messaging.system", "redis"),
			attribute.String("messaging.operation.type", "send"),
			attribute.String("messaging.operation.name", "publish"),
			attribute.String("messaging.destination.name", "once."+msgs[i].Type),
			attribute.String("messaging.message.id", msgs[i].ID.String()),
			attribute.String("once.event_type", msgs[i].Type),
		})
		if want.trace != "" {
			assert.Equal(t, want.trace, s.SpanContext.TraceID().String())
			assert.Equal(t, want.parent, s.Parent.SpanID().String())
		} else {
			assert.False(t, s.Parent.IsValid(), "no traceparent: a new trace")
		}
		sent := next.got[i].Traceparent
		assert.Equal(t, "00-"+s.SpanContext.TraceID().String()+"-"+s.SpanContext.SpanID().String()+"-01", sent)
	}
	assert.Equal(t, spans[0].SpanContext.SpanID(), next.span.SpanID(), "the broker's call runs under the first message's span")
}

// A failed publish fails every span of the batch, with the error
// sanitized (domain.SanitizeError): spans leave the process.
func TestPublisherMarksSpansFailedWithTheErrorSanitized(t *testing.T) {
	tp, exporter := newProvider(t)
	next := &recordingPublisher{err: errors.New("cannot connect to redis://once:hunter2@redis/0: connection refused")}
	err := tracing.NewPublisher(next, tp, redis).Publish(context.Background(), ports.Message{ID: uuid.New(), Type: "media.process"})
	require.Error(t, err)
	spans := exporter.GetSpans()
	require.Len(t, spans, 1)
	assert.Equal(t, codes.Error, spans[0].Status.Code)
	assert.Equal(t, domain.SanitizeError(next.err), spans[0].Status.Description)
	assert.NotContains(t, spans[0].Status.Description, "hunter2")
}

// The consumer span is the producer's child, and the handler's context
// carries it as the traceparent of any event the job writes.
func TestHandlerMakesAConsumerSpanChildOfTheMessage(t *testing.T) {
	tp, exporter := newProvider(t)
	const sent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	var inJob string
	h := tracing.NewHandler(ports.MessageHandlerFunc(func(ctx context.Context, msg ports.Message) error {
		inJob = domain.TraceparentFrom(ctx)
		return nil
	}), tp, redis)
	msg := ports.Message{ID: uuid.New(), Type: "media.process", Traceparent: sent}
	require.NoError(t, h.Handle(context.Background(), msg))
	spans := exporter.GetSpans()
	require.Len(t, spans, 1)
	s := spans[0]
	assert.Equal(t, trace.SpanKindConsumer, s.SpanKind)
	assert.Equal(t, "process once.media.process", s.Name)
	assert.Subset(t, s.Attributes, []attribute.KeyValue{
		attribute.String("messaging.system", "redis"),
		attribute.String("messaging.operation.type", "process"),
		attribute.String("messaging.operation.name", "process"),
		attribute.String("messaging.destination.name", "once.media.process"),
		attribute.String("messaging.message.id", msg.ID.String()),
	})
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", s.SpanContext.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", s.Parent.SpanID().String())
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-"+s.SpanContext.SpanID().String()+"-01", inJob)
}
