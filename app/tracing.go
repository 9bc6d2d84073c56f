package app

import (
	"context"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/tracing"
	"github.com/oncehq/once/ports"
)

// Tracing is the process's OpenTelemetry tracer provider, configured by the
// standard OTEL_* variables (tracing.Enabled); Provider is nil when tracing
// is off, and then nothing is wrapped at all. Tests put an in-memory
// exporter in with fx.Decorate.
type Tracing struct {
	Provider trace.TracerProvider
}

var tracingModule = fx.Module("tracing", fx.Provide(newTracing))

func newTracing(lc fx.Lifecycle, cfg Config, log *slog.Logger) (Tracing, error) {
	if !tracing.Enabled(os.Getenv) {
		return Tracing{}, nil
	}
	tp, err := tracing.NewProvider(context.Background(), cfg.Owner(), log.With("component", "tracing"))
	if err != nil {
		return Tracing{}, err
	}
	// Stopping flushes the spans still batched.
	lc.Append(fx.Hook{OnStop: tp.Shutdown})
	return Tracing{Provider: tp}, nil
}

// publisher gives pub a producer span per message when tracing is on.
func (t Tracing) publisher(pub ports.Publisher) ports.Publisher {
	if t.Provider == nil {
		return pub
	}
	return tracing.NewPublisher(pub, t.Provider)
}

// handlers give each worker handler a consumer span when tracing is on.
func (t Tracing) handlers(hs Handlers) Handlers {
	if t.Provider == nil {
		return hs
	}
	traced := make(Handlers, len(hs))
	for eventType, h := range hs {
		traced[eventType] = tracing.NewHandler(h, t.Provider)
	}
	return traced
}
