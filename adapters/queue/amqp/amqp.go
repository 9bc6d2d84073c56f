// Package amqp is the queue on RabbitMQ (AMQP 0.9.1): workers consume
// through watermill-amqp/v3, the publisher is written on amqp091 directly
// (publisher.go).
//
// A topic is a durable fanout exchange and a durable queue of the same
// name bound to it; the workers of all processes consume that queue, so
// they share its messages. Both the publisher and the subscriber declare
// the exchange, the queue and the binding, so a message published while no
// worker has ever run waits in the queue instead of being dropped as
// unroutable. Messages are persistent, carry the event id as the AMQP
// message-id, and Publish returns only after the broker confirmed each of
// them (publisher confirms); a nack or a closed channel is an error.
package amqp

import (
	"log/slog"
	"time"

	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
)

// Config configures AMQP publishers and subscribers.
type Config struct {
	// URL is an amqp:// or amqps:// URI.
	URL string
	// DialTimeout bounds connecting, TLS and AMQP handshake (default 5s).
	DialTimeout time.Duration
	// Prefetch is how many unacknowledged messages the broker hands one
	// subscription (default 1: fair sharing between workers).
	Prefetch int
}

func (c Config) withDefaults() Config {
	if c.DialTimeout == 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.Prefetch == 0 {
		c.Prefetch = 1
	}
	return c
}

// amqpConfig is the connection's configuration, publisher and subscriber
// alike.
func (c Config) amqpConfig() amqp091.Config {
	c = c.withDefaults()
	return amqp091.Config{
		Locale:    "en_US",
		Heartbeat: 10 * time.Second,
		Dial:      amqp091.DefaultDial(c.DialTimeout),
	}
}

// watermillConfig is the one place the broker behaviour is chosen: the
// subscriber's whole configuration, and the topology the publisher
// declares.
func (c Config) watermillConfig() wmamqp.Config {
	c = c.withDefaults()
	amqpConfig := c.amqpConfig()
	return wmamqp.Config{
		Connection: wmamqp.ConnectionConfig{
			AmqpURI:    c.URL,
			AmqpConfig: &amqpConfig,
		},
		Marshaler: Marshaler{},
		Exchange: wmamqp.ExchangeConfig{
			GenerateName: wmamqp.GenerateExchangeNameTopicName,
			Type:         "fanout",
			Durable:      true,
		},
		Queue: wmamqp.QueueConfig{
			GenerateName: wmamqp.GenerateQueueNameTopicName,
			Durable:      true,
		},
		QueueBind: wmamqp.QueueBindConfig{
			GenerateRoutingKey: func(string) string { return "" },
		},
		// For a watermill publisher made from this configuration (tests
		// compare with one); the adapter's own Publisher confirms too.
		Publish: wmamqp.PublishConfig{
			GenerateRoutingKey: func(string) string { return "" },
			ConfirmDelivery:    true,
		},
		Consume: wmamqp.ConsumeConfig{
			Qos: wmamqp.QosConfig{PrefetchCount: c.Prefetch},
		},
		TopologyBuilder: topology{},
	}
}

// NewSubscriber connects and returns a subscriber owning its connection.
func NewSubscriber(cfg Config, logger *slog.Logger) (message.Subscriber, error) {
	sub, err := wmamqp.NewSubscriber(cfg.watermillConfig(), queue.NewLogger(logger))
	if err != nil {
		return nil, connectError("subscriber", err)
	}
	return sub, nil
}

func connectError(what string, err error) error {
	return domain.Wrap(domain.CodeUnavailable, queue.Sanitized(err), "amqp: connect "+what)
}
