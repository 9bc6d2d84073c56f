package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/adapters/tracing"
	"github.com/oncehq/once/ports"
)

// Broker is the chosen queue's watermill publisher and a way to make
// subscribers. Subscribers are made on demand: a process that only
// dispatches never connects a consumer.
type Broker struct {
	Publisher     message.Publisher
	NewSubscriber func() (message.Subscriber, error)
}

// queueModule picks the broker from configuration with a plain switch.
// BullMQ has a module of its own: it publishes the jobs to BullMQ, and
// once's own jobs to Redis Streams (bullmqModule).
func queueModule(kind string) fx.Option {
	if kind == QueueBullMQ {
		return bullmqModule
	}
	return fx.Module("queue",
		fx.Provide(
			newQueueBroker,
			func(b *Broker, cfg QueueConfig, m tracing.Messaging, t Tracing) ports.Publisher {
				return t.publisher(queue.NewPublisher(b.Publisher, cfg.QueuePrefix), m)
			},
		),
	)
}

// newQueueBroker is the broker of cfg for this process, its publisher
// closed at stop.
func newQueueBroker(lc fx.Lifecycle, cfg QueueConfig, worker WorkerConfig, process ProcessConfig, log *slog.Logger, t Tracing) (*Broker, error) {
	b, err := newBroker(cfg, process.Owner(), worker.WorkBuffer, t, log.With("component", "queue"))
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return b.Publisher.Close() }})
	return b, nil
}

// newBroker makes the broker of cfg, its Redis consumer named owner, its
// subscriptions handing a worker up to prefetch messages of each event
// type ahead of its slots (ONCE_WORK_BUFFER); its clients make spans with
// t (a Redis command, an AMQP publish) when tracing is on.
func newBroker(cfg QueueConfig, owner string, prefetch int, t Tracing, log *slog.Logger) (*Broker, error) {
	switch cfg.Queue {
	case QueueMemory:
		pub, sub := memqueue.New(memqueue.Config{Prefetch: prefetch})
		return &Broker{Publisher: pub, NewSubscriber: func() (message.Subscriber, error) { return sub, nil }}, nil
	case QueueRedis:
		rc := redisConfig(cfg, owner)
		rc.Tracing, rc.Prefetch = t.clients(), prefetch
		return watermillBroker(rc, log, redisstream.NewPublisher, redisstream.NewSubscriber)
	case QueueAMQP:
		ac := amqpConfig(cfg)
		ac.Tracing, ac.Prefetch = t.clients(), prefetch
		return watermillBroker(ac, log, amqp.NewPublisher, amqp.NewSubscriber)
	default:
		return nil, fmt.Errorf("unknown queue %q", cfg.Queue)
	}
}

// watermillBroker makes the publisher now, and subscribers on demand, from
// one configuration of a broker sub-package.
func watermillBroker[C any](c C, log *slog.Logger,
	newPublisher func(C, *slog.Logger) (message.Publisher, error),
	newSubscriber func(C, *slog.Logger) (message.Subscriber, error),
) (*Broker, error) {
	pub, err := newPublisher(c, log)
	if err != nil {
		return nil, err
	}
	return &Broker{Publisher: pub, NewSubscriber: func() (message.Subscriber, error) { return newSubscriber(c, log) }}, nil
}

// amqpConfig is the RabbitMQ configuration of publishers and subscribers.
func amqpConfig(cfg QueueConfig) amqp.Config {
	return amqp.Config{URL: cfg.AMQPURL, DialTimeout: 5 * time.Second, QueueType: cfg.AMQPQueueType, DeliveryLimit: cfg.AMQPDeliveryLimit}
}

// redisConfig is the Redis Streams configuration of publishers,
// subscribers and the trimmer, whose consumer is named owner.
func redisConfig(cfg QueueConfig, owner string) redisstream.Config {
	return redisstream.Config{URL: cfg.RedisURL, ConsumerGroup: redisstream.DefaultConsumerGroup, Consumer: owner, MaxIdleTime: cfg.RedisClaimIdle}
}

// redisTrimModule trims the workers' streams, periodically, down to what
// their consumer group still needs (redisstream.Trimmer), when they
// consume Redis Streams: with ONCE_QUEUE=redis, and with bullmq, whose
// own jobs are there (the Handlers are then theirs only).
func redisTrimModule(kind string) fx.Option {
	if kind != QueueRedis && kind != QueueBullMQ {
		return fx.Options()
	}
	return fx.Invoke(func(lc fx.Lifecycle, cfg QueueConfig, process ProcessConfig, handlers Handlers, log *slog.Logger) error {
		streams := make([]string, 0, len(handlers))
		for eventType := range handlers {
			streams = append(streams, queue.Topic(cfg.QueuePrefix, eventType))
		}
		slices.Sort(streams)
		t, err := redisstream.NewTrimmer(redisConfig(cfg, process.Owner()), streams)
		if err != nil {
			return err
		}
		lc.Append(fx.Hook{OnStop: func(context.Context) error { return t.Close() }})
		runEvery(lc, cfg.RedisTrimInterval, log, "redis stream trim", t.RunOnce)
		return nil
	})
}
