package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/adapters/tracing"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// ErrNoWorkerOnBullMQ is why `once work` does not run with ONCE_QUEUE=bullmq.
var ErrNoWorkerOnBullMQ = errors.New("ONCE_QUEUE=bullmq: the jobs are consumed by Node.js BullMQ workers, not by `once work` " +
	"(see docs/delivery.md, BullMQ); run `once dispatch` or `once serve` to publish them")

// bullmqModule provides the BullMQ publisher. It has no subscriber side:
// Node.js workers consume the jobs.
var bullmqModule = fx.Module("bullmq",
	fx.Provide(newBullMQPublisher),
)

// newBullMQPublisher publishes to the queues of the routes (jobs) on the
// Redis of brokers, checking their layout at start.
func newBullMQPublisher(lc fx.Lifecycle, jobs BullMQConfig, brokers QueueConfig, m tracing.Messaging, t Tracing, log *slog.Logger) (ports.Publisher, error) {
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
		OnStart: func(ctx context.Context) error { return checkBullMQLayout(ctx, pub, bc, log) },
		OnStop:  func(context.Context) error { return pub.Close() },
	})
	return t.publisher(pub, m), nil
}

// bullmqCheckTimeout bounds the start-up check, well inside fx's start
// timeout: an unreachable Redis must not fail the start.
const bullmqCheckTimeout = 5 * time.Second

// checkBullMQLayout refuses to start when a queue once publishes to was set
// up by an unverified BullMQ version, saying so in one line. A Redis that
// does not answer yet only delays the check to the first job (the add
// script checks every job): an outage must not stop the service.
func checkBullMQLayout(ctx context.Context, pub *bullmq.Publisher, bc bullmq.Config, log *slog.Logger) error {
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
		log.Info("publishing outbox events as BullMQ jobs for Node.js workers",
			"prefix", bc.Prefix, "queues", strings.Join(queues, ","), "verified_with", "bullmq "+bullmq.VerifiedWith)
	}
	return nil
}

// noWorkerOnBullMQ says, once at start, why `once serve` runs no worker.
var noWorkerOnBullMQ = fx.Invoke(func(log *slog.Logger) {
	log.Info("no in-process worker: with ONCE_QUEUE=bullmq the jobs are consumed by Node.js BullMQ workers",
		"component", "worker")
})
