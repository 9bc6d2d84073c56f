package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// One request that starts a job, with the service split as
// docs/configuration.md recommends (the API in one process, the Dispatcher and the worker in
// another, both exporting to one in-memory exporter): the client's trace
// holds the server span, the request's statements (database spans) as its
// children, the Dispatcher's producer span as its child, the broker
// client's span that sent it (the Redis pipeline, the RabbitMQ publish) as
// the producer's child, the worker's consumer span as the producer's
// child, and the job's statements under it; the messaging spans carry the
// semantic conventions' attributes, and no span carries a statement's text
// or arguments. Every log line the API process wrote for the request
// carries its request id and trace id.
func TestPostgresOneTraceFromRequestToJob(t *testing.T) {
	t.Run("redis", func(t *testing.T) {
		oneTraceFromRequestToJob(t, app.QueueRedis, "redis", func(string) (attribute.KeyValue, string) {
			return attribute.String("db.system", "redis"), "redis.pipeline xadd"
		})
	})
	t.Run("rabbitmq", func(t *testing.T) {
		oneTraceFromRequestToJob(t, app.QueueAMQP, "rabbitmq", func(exchange string) (attribute.KeyValue, string) {
			return attribute.String("messaging.system", "rabbitmq"), "basic.publish " + exchange
		})
	})
}

// oneTraceFromRequestToJob runs the request through queue, whose
// messaging.system is system; brokerSpan is the attribute and the name of
// the broker client's span of a publish to stream (the destination).
func oneTraceFromRequestToJob(t *testing.T, queue, system string, brokerSpan func(stream string) (attribute.KeyValue, string)) {
	db := pgtest.New(t)
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	traced := fx.Decorate(func(app.Tracing) app.Tracing { return app.Tracing{Provider: tp} })

	api := apitest.Start(t, apitest.Config(db.AppDSN), db, traced) // no Dispatcher, no worker
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = queue, true, true

	const (
		clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		clientSpan  = "00f067aa0ba902b7"
		requestID   = "trace-test-request-1"
	)
	logged := len(api.Logs.String())
	shop := "traced-shop-" + key() // in the INSERT's text: it must appear in no span
	r := api.Do(t, "POST", "/v1/stores", storeBody(shop), map[string]string{
		"Idempotency-Key": key(),
		"traceparent":     "00-" + clientTrace + "-" + clientSpan + "-01",
		"X-Request-Id":    requestID,
	})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	assert.Equal(t, requestID, r.Header.Get("X-Request-Id"))
	var created storeCreated
	r.JSON(t, &created)

	// The access log line is written once the handler returned, which may
	// be after the client has the response.
	var lines []map[string]any
	apitest.Eventually(t, 10*time.Second, "the request's access log line", func() bool {
		lines = jsonLines(t, api.Logs.String()[logged:])
		for _, l := range lines {
			if l["msg"] == "http request" {
				return true
			}
		}
		return false
	})
	require.GreaterOrEqual(t, len(lines), 2, "the idempotent request and the access log")
	for _, l := range lines {
		assert.Equal(t, requestID, l["request_id"], "line %v", l)
		assert.Equal(t, clientTrace, l["trace_id"], "line %v", l)
		assert.NotEmpty(t, l["span_id"], "line %v", l)
	}

	delivery := apitest.Start(t, cfg, db, traced)
	actAs(delivery, api)
	op := delivery.WaitOperation(t, created.Operation.ID, 30*time.Second)
	require.Equal(t, "succeeded", op.Status, op.Error)

	find := func(kind trace.SpanKind, name string) (tracetest.SpanStub, bool) {
		for _, s := range exporter.GetSpans() {
			if s.SpanKind == kind && s.Name == name {
				return s, true
			}
		}
		return tracetest.SpanStub{}, false
	}
	stream := cfg.QueuePrefix + model.EventStoreCredentialsVerify // the stream is the destination
	consume := "process " + stream
	apitest.Eventually(t, 10*time.Second, "the consumer span ended", func() bool {
		_, ok := find(trace.SpanKindConsumer, consume)
		return ok
	})
	server, ok := find(trace.SpanKindServer, "POST /v1/stores")
	require.True(t, ok, "server span among %v", spanNames(exporter))
	producer, ok := find(trace.SpanKindProducer, "publish "+stream)
	require.True(t, ok, "producer span among %v", spanNames(exporter))
	consumer, _ := find(trace.SpanKindConsumer, consume)
	eventID := api.Events(t)[0].ID.String()
	for _, m := range []struct {
		span      tracetest.SpanStub
		operation string
		kind      string
	}{{producer, "publish", "send"}, {consumer, "process", "process"}} {
		assert.Subset(t, m.span.Attributes, []attribute.KeyValue{
			attribute.String("messaging.system", system),
			attribute.String("messaging.operation.name", m.operation),
			attribute.String("messaging.operation.type", m.kind),
			attribute.String("messaging.destination.name", stream),
			attribute.String("messaging.message.id", eventID),
		}, m.span.Name)
	}

	// The client spans, by their parent: the request's and the job's
	// statements (a batch's under the batch's span), and the broker
	// client's span of the publish.
	children := func(parent tracetest.SpanStub, system attribute.KeyValue) []string {
		under := map[trace.SpanID]bool{parent.SpanContext.SpanID(): true}
		var names []string
		for _, s := range exporter.GetSpans() {
			if s.SpanKind == trace.SpanKindClient && s.Name == "BATCH" && under[s.Parent.SpanID()] {
				under[s.SpanContext.SpanID()] = true
			}
		}
		for _, s := range exporter.GetSpans() {
			if s.SpanKind == trace.SpanKindClient && under[s.Parent.SpanID()] && slices.Contains(s.Attributes, system) {
				assert.Equal(t, clientTrace, s.SpanContext.TraceID().String(), s.Name)
				names = append(names, s.Name)
			}
		}
		return names
	}
	postgresql := attribute.String("db.system.name", "postgresql")
	assert.Contains(t, children(server, postgresql), "INSERT stores", "the request's statements")
	assert.Contains(t, children(consumer, postgresql), "UPDATE operations", "the job's statements")
	brokerSystem, brokerName := brokerSpan(stream)
	assert.Contains(t, children(producer, brokerSystem), brokerName, "the broker's span of the publish")
	for _, s := range exporter.GetSpans() {
		assert.NotContains(t, s.Name, shop)
		for _, a := range s.Attributes {
			assert.NotContains(t, []attribute.Key{"db.query.text", "db.statement"}, a.Key, "%s: no statement text", s.Name)
			for _, secret := range []string{shop, testAPIKey, testAPISecret} {
				assert.NotContains(t, a.Value.Emit(), secret, "%s: %s", s.Name, a.Key)
			}
		}
	}

	for _, s := range []tracetest.SpanStub{server, producer, consumer} {
		assert.Equal(t, clientTrace, s.SpanContext.TraceID().String(), "%s is in the client's trace", s.Name)
	}
	assert.Equal(t, clientSpan, server.Parent.SpanID().String(), "the server span is the client's child")
	assert.Equal(t, server.SpanContext.SpanID(), producer.Parent.SpanID(), "the publish is the request's child")
	assert.Equal(t, producer.SpanContext.SpanID(), consumer.Parent.SpanID(), "the job is the publish's child")
	assert.Contains(t, server.Attributes, attribute.String("once.request_id", requestID))
	assert.Contains(t, server.Attributes, attribute.String("http.route", "/v1/stores"))
	assert.Equal(t, lines[0]["span_id"], server.SpanContext.SpanID().String(), "log lines name the server span")

	// The job's own lines, in the delivery process, are in the trace too.
	jobLines := 0
	for _, l := range jsonLines(t, delivery.Logs.String()) {
		if l["operation"] != created.Operation.ID.String() || l["handler"] == nil {
			continue
		}
		jobLines++
		assert.Equal(t, clientTrace, l["trace_id"], "job line %v", l)
		assert.Equal(t, consumer.SpanContext.SpanID().String(), l["span_id"], "job line %v", l)
	}
	assert.Positive(t, jobLines, "the job logged its outcome")
}

func jsonLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(logs), "\n") {
		if raw == "" {
			continue
		}
		var l map[string]any
		require.NoError(t, json.Unmarshal([]byte(raw), &l), "log line %q is JSON", raw)
		lines = append(lines, l)
	}
	return lines
}

func spanNames(e *tracetest.InMemoryExporter) []string {
	var names []string
	for _, s := range e.GetSpans() {
		names = append(names, s.SpanKind.String()+" "+s.Name)
	}
	return names
}
