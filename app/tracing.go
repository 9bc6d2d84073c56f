package app

import (
	"context"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/queue"
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

var tracingModule = fx.Module("tracing", fx.Provide(newTracing, messaging))

func newTracing(lc fx.Lifecycle, cfg ProcessConfig, log *slog.Logger) (Tracing, error) {
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
func (t Tracing) publisher(pub ports.Publisher, m tracing.Messaging) ports.Publisher {
	if t.Provider == nil {
		return pub
	}
	return tracing.NewPublisher(pub, t.Provider, m)
}

// handlers give each worker handler a consumer span when tracing is on.
func (t Tracing) handlers(hs Handlers, m tracing.Messaging) Handlers {
	if t.Provider == nil {
		return hs
	}
	traced := make(Handlers, len(hs))
	for eventType, h := range hs {
		traced[eventType] = tracing.NewHandler(h, t.Provider, m)
	}
	return traced
}

// clients is the provider the database and broker clients make their
// spans with: only inside a request's or a job's span (tracing.ChildrenOnly);
// nil when tracing is off, and then the clients are not instrumented.
func (t Tracing) clients() trace.TracerProvider {
	if t.Provider == nil {
		return nil
	}
	return tracing.ChildrenOnly(t.Provider)
}

// postgres traces the pool's statements when tracing is on.
func (t Tracing) postgres() []postgres.OpenOption {
	if t.Provider == nil {
		return nil
	}
	return []postgres.OpenOption{postgres.WithQueryTracer(tracing.NewDBTracer(t.clients()))}
}

// messaging names the broker of cfg and the destination of each event type
// for the messaging spans: the stream (Redis), exchange (RabbitMQ) or
// topic (memory) of queue.Topic, or the BullMQ queue of the routes (jobs).
// With bullmq, once's own jobs are on Redis Streams (redisMessaging).
func messaging(cfg QueueConfig, jobs BullMQConfig) tracing.Messaging {
	topic := func(eventType string) string { return queue.Topic(cfg.QueuePrefix, eventType) }
	switch cfg.Queue {
	case QueueRedis:
		return redisMessaging(cfg)
	case QueueAMQP:
		return tracing.Messaging{System: "rabbitmq", Destination: topic}
	case QueueBullMQ:
		routes, _ := jobs.routes() // validated with the configuration
		return tracing.Messaging{System: "bullmq", Destination: routes.Queue}
	default:
		return tracing.Messaging{System: "gochannel", Destination: topic}
	}
}

// redisMessaging names Redis Streams and the stream of each event type,
// for ONCE_QUEUE=redis and for once's own jobs with bullmq.
func redisMessaging(cfg QueueConfig) tracing.Messaging {
	return tracing.Messaging{System: "redis", Destination: func(eventType string) string { return queue.Topic(cfg.QueuePrefix, eventType) }}
}
