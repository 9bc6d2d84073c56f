package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/adapters/tracing"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// bullmqModule publishes the jobs to BullMQ, for Node.js workers, and
// once's own jobs (ownEventTypes) to Redis Streams on the same Redis, for
// once's workers (ownJobsWorkerModule): a Node.js worker has neither the
// sealed signing secrets nor the guarded client a webhook delivery needs.
var bullmqModule = fx.Module("bullmq",
	fx.Provide(newOwnJobsBroker, newBullMQPublisher),
)

// newOwnJobsBroker is the Redis Streams broker of once's own jobs, on the
// Redis at ONCE_REDIS_URL, under ONCE_QUEUE_PREFIX as with
// ONCE_QUEUE=redis.
func newOwnJobsBroker(lc fx.Lifecycle, cfg QueueConfig, worker WorkerConfig, process ProcessConfig, log *slog.Logger, t Tracing) (*Broker, error) {
	cfg.Queue = QueueRedis
	return newQueueBroker(lc, cfg, worker, process, log, t)
}

// newBullMQPublisher publishes to the queues of the routes (jobs) on the
// Redis of brokers, checking their layout at start, and once's own jobs
// to their streams (own).
func newBullMQPublisher(lc fx.Lifecycle, jobs BullMQConfig, brokers QueueConfig, own *Broker, m tracing.Messaging, t Tracing, log *slog.Logger) (ports.Publisher, error) {
	bc, err := jobs.PublisherConfig(brokers.RedisURL)
	if err != nil {
		return nil, err
	}
	bc.Tracing = t.clients()
	pub, err := bullmq.New(bc)
	if err != nil {
		return nil, err
	}
	log = log.With("component", "bullmq")
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error { return checkBullMQLayout(ctx, pub, bc, brokers.QueuePrefix, log) },
		OnStop:  func(context.Context) error { return pub.Close() },
	})
	streams := t.publisher(queue.NewPublisher(own.Publisher, brokers.QueuePrefix), redisMessaging(brokers))
	routed := make(map[string]ports.Publisher, len(ownEventTypes))
	for _, eventType := range ownEventTypes {
		routed[eventType] = streams
	}
	return queue.NewByType(t.publisher(pub, m), routed), nil
}

// bullmqCheckTimeout bounds the start-up check, well inside fx's start
// timeout: an unreachable Redis must not fail the start.
const bullmqCheckTimeout = 5 * time.Second

// checkBullMQLayout refuses to start when a queue once publishes to was set
// up by an unverified BullMQ version, saying so in one line. A Redis that
// does not answer yet only delays the check to the first job (the add
// script checks every job): an outage must not stop the service.
func checkBullMQLayout(ctx context.Context, pub *bullmq.Publisher, bc bullmq.Config, streamPrefix string, log *slog.Logger) error {
	queues := bc.Routes.QueuesOf(eventTypes...)
	ctx, cancel := context.WithTimeout(ctx, bullmqCheckTimeout)
	defer cancel()
	err := pub.Verify(ctx, queues...)
	var layout *bullmq.LayoutError
	switch {
	case errors.As(err, &layout):
		log.Error(layout.Error())
		return layout
	case err != nil:
		log.Warn("cannot check the BullMQ queues at start-up; every job is checked when it is written",
			"error", domain.SanitizeError(err))
	default:
		log.Info("publishing outbox events as BullMQ jobs for Node.js workers, and once's own jobs to Redis Streams for `once work`",
			"prefix", bc.Prefix, "queues", strings.Join(queues, ","), "verified_with", "bullmq "+bullmq.VerifiedWith,
			"own_streams", strings.Join(ownStreams(streamPrefix), ","))
	}
	return nil
}

// ownStreams are the Redis streams of once's own jobs under prefix.
func ownStreams(prefix string) []string {
	streams := make([]string, 0, len(ownEventTypes))
	for _, eventType := range ownEventTypes {
		streams = append(streams, queue.Topic(prefix, eventType))
	}
	return streams
}

// ownJobsWorkerModule is the worker of ONCE_QUEUE=bullmq (`once work`,
// and `once serve`'s in-process worker): it consumes once's own jobs, and
// only those, from Redis Streams; the task jobs are the Node.js workers'.
func ownJobsWorkerModule() fx.Option {
	return workerModule(
		fx.Provide(newOwnHandlers),
		// Its messages are on Redis Streams, not in BullMQ.
		fx.Decorate(redisMessaging),
		fx.Invoke(func(cfg QueueConfig, log *slog.Logger) {
			log.Info("worker consumes once's own jobs only (webhook deliveries, from Redis Streams): with ONCE_QUEUE=bullmq the task jobs are for Node.js BullMQ workers",
				"streams", strings.Join(ownStreams(cfg.QueuePrefix), ","))
		}),
	)
}

// newOwnHandlers maps each of once's own event types to its handler: the
// only handlers there are (no kind's is provided).
func newOwnHandlers(in handlersIn) (Handlers, error) {
	return handlersOf(in.Handlers, ownEventTypes)
}
