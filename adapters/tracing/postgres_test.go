package tracing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/adapters/tracing"
)

// A statement inside a request or a job is a client span named by its
// summary, with no trace of its text; outside any span it makes none.
func TestDBTracerSpansStatementsUnderAParentOnly(t *testing.T) {
	tp, exporter := newProvider(t)
	db := tracing.NewDBTracer(tracing.ChildrenOnly(tp))
	const sql = `INSERT INTO "stores" ("id", "name") VALUES ('0193a3b4-7c2d-7e8f-9a0b-1c2d3e4f5a6b', 'hunter2-shop')`

	alone := db.TraceQueryStart(context.Background(), nil, pgx.TraceQueryStartData{SQL: sql})
	db.TraceQueryEnd(alone, nil, pgx.TraceQueryEndData{})
	assert.Empty(t, exporter.GetSpans(), "a background statement makes no trace of its own")

	ctx, request := tp.Tracer("test").Start(context.Background(), "POST /v1/stores")
	q := db.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{SQL: sql, Args: []any{"hunter2"}})
	db.TraceQueryEnd(q, nil, pgx.TraceQueryEndData{Err: errors.New(`duplicate key value violates unique constraint "stores_pkey" at postgres://once:hunter2@db:5432`)})
	request.End()

	spans := exporter.GetSpans()
	require.Len(t, spans, 2)
	s := spans[0]
	assert.Equal(t, "INSERT stores", s.Name)
	assert.Equal(t, trace.SpanKindClient, s.SpanKind)
	assert.Equal(t, request.SpanContext().SpanID(), s.Parent.SpanID())
	assert.Subset(t, s.Attributes, []attribute.KeyValue{
		attribute.String("db.system.name", "postgresql"),
		attribute.String("db.system", "postgresql"),
		attribute.String("db.operation.name", "INSERT"),
		attribute.String("db.collection.name", "stores"),
		attribute.String("db.query.summary", "INSERT stores"),
	})
	for _, a := range s.Attributes {
		assert.NotContains(t, a.Value.Emit(), "hunter2", "attribute %s", a.Key)
	}
	assert.Equal(t, codes.Error, s.Status.Code)
	assert.NotContains(t, s.Status.Description, "hunter2")
}
