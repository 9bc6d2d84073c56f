package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/adapters/queue/gochannel"
	"github.com/oncehq/once/adapters/queue/redisstream"
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
// BullMQ has a module of its own: it is a publisher only.
func queueModule(cfg Config) fx.Option {
	if cfg.Queue == QueueBullMQ {
		return bullmqModule(cfg)
	}
	return fx.Module("queue",
		fx.Provide(
			func(lc fx.Lifecycle, log *slog.Logger) (*Broker, error) {
				b, err := newBroker(cfg, log)
				if err != nil {
					return nil, err
				}
				lc.Append(fx.Hook{OnStop: func(context.Context) error { return b.Publisher.Close() }})
				return b, nil
			},
			fx.Annotate(func(b *Broker) *queue.Publisher { return queue.NewPublisher(b.Publisher, cfg.QueuePrefix) },
				fx.As(new(ports.Publisher))),
		),
	)
}

func newBroker(cfg Config, log *slog.Logger) (*Broker, error) {
	switch cfg.Queue {
	case QueueMemory:
		pub, sub := gochannel.New(gochannel.Config{}, log)
		return &Broker{Publisher: pub, NewSubscriber: func() (message.Subscriber, error) { return sub, nil }}, nil
	case QueueRedis:
		rc := redisstream.Config{URL: cfg.RedisURL, ConsumerGroup: "once-workers", Consumer: cfg.Owner()}
		pub, err := redisstream.NewPublisher(rc, log)
		if err != nil {
			return nil, err
		}
		return &Broker{Publisher: pub, NewSubscriber: func() (message.Subscriber, error) { return redisstream.NewSubscriber(rc, log) }}, nil
	case QueueAMQP:
		ac := amqp.Config{URL: cfg.AMQPURL, DialTimeout: 5 * time.Second}
		pub, err := amqp.NewPublisher(ac, log)
		if err != nil {
			return nil, err
		}
		return &Broker{Publisher: pub, NewSubscriber: func() (message.Subscriber, error) { return amqp.NewSubscriber(ac, log) }}, nil
	default:
		return nil, fmt.Errorf("unknown queue %q", cfg.Queue)
	}
}
