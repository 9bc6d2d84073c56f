package tracing

import (
	"context"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// DBTracer makes a client span per statement pgx sends, and one per batch:
// a pgx.QueryTracer and pgx.BatchTracer for the connections of the pool
// (postgres.WithQueryTracer).
//
// A span is named by its statement's summary (SQLSummary: "SELECT
// operations", "INSERT stores"), never by its text: bun writes the
// arguments into the text, so the text would carry the data a request
// wrote. For the same reason the text is not an attribute either.
type DBTracer struct {
	tracer trace.Tracer
}

var (
	_ pgx.QueryTracer = (*DBTracer)(nil)
	_ pgx.BatchTracer = (*DBTracer)(nil)
)

// NewDBTracer makes spans with tp; wrap it with ChildrenOnly so statements
// outside a request or a job make none.
func NewDBTracer(tp trace.TracerProvider) *DBTracer {
	return &DBTracer{tracer: tp.Tracer(instrumentation)}
}

// dbSystem is db.system.name, and db.system, its name before semconv 1.26
// that many backends still key database spans on.
var dbSystem = []attribute.KeyValue{semconv.DBSystemNamePostgreSQL, attribute.String("db.system", "postgresql")}

func (t *DBTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	ctx, _ = t.startStatement(ctx, data.SQL)
	return ctx
}

// startStatement starts the span of one statement, named by its summary.
func (t *DBTracer) startStatement(ctx context.Context, sql string) (context.Context, trace.Span) {
	summary := SQLSummary(sql)
	attrs := append(dbSystem[:len(dbSystem):len(dbSystem)], semconv.DBQuerySummary(summary.String()))
	if summary.Operation != "" {
		attrs = append(attrs, semconv.DBOperationName(summary.Operation))
	}
	if summary.Collection != "" {
		attrs = append(attrs, semconv.DBCollectionName(summary.Collection))
	}
	return t.tracer.Start(ctx, summary.String(), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

func (t *DBTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	end(trace.SpanFromContext(ctx), data.Err)
}

func (t *DBTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	attrs := append(dbSystem[:len(dbSystem):len(dbSystem)], semconv.DBOperationName("BATCH"), semconv.DBQuerySummary("BATCH"))
	if data.Batch != nil {
		attrs = append(attrs, semconv.DBOperationBatchSize(data.Batch.Len()))
	}
	ctx, _ = t.tracer.Start(ctx, "BATCH", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx
}

// TraceBatchQuery makes a span of each statement of a batch, a child of
// the batch's, ended as its result is read: a job's statements go in
// batches (its reads with BEGIN, its UPDATEs together), and a trace that
// showed only "BATCH" would not say which statement was slow or failed.
// Their times are the pipeline's (a statement's span starts when its
// result is read), the batch's span is the round trip's.
func (t *DBTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	_, span := t.startStatement(ctx, data.SQL)
	end(span, data.Err)
}

func (t *DBTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	end(trace.SpanFromContext(ctx), data.Err)
}

// end ends span, failed with err if any (sanitized, see fail).
func end(span trace.Span, err error) {
	fail(span, err)
	span.End()
}
