package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/oncehq/once/domain"
)

// ServiceName is service.name on every span unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "once"

// Enabled reports whether the OTEL_* variables ask for traces: an
// exporter named in OTEL_TRACES_EXPORTER other than "none", or an OTLP
// endpoint, and OTEL_SDK_DISABLED not "true". Unset, tracing is off: the
// process makes no spans and never tries to reach a collector.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exporter != "" {
		return exporter != "none"
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewProvider builds a tracer provider exporting through the exporter the
// OTEL_* variables choose (autoexport: otlp over grpc or http/protobuf,
// console), batched, sampled as OTEL_TRACES_SAMPLER says. instance is
// service.instance.id, the process's owner name. The exporter connects
// lazily: an unreachable collector fails exports, not the start.
//
// Errors the SDK meets later (a failed export) are logged through log, as
// are its own log lines, so every line stays structured.
func NewProvider(ctx context.Context, instance string, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	exporter, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q (otlp, console or none), OTEL_EXPORTER_OTLP_PROTOCOL=%q (grpc or http/protobuf): %w",
			os.Getenv("OTEL_TRACES_EXPORTER"), os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(ServiceName), semconv.ServiceInstanceID(instance)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	otel.SetLogger(logr.FromSlogHandler(log.Handler()))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry error", slog.String("error", domain.SanitizeError(err)))
	}))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}
