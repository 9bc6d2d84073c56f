// Package amqp is the queue on RabbitMQ (watermill-amqp/v3, AMQP 0.9.1).
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
	"fmt"
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
	// ChannelPoolSize keeps that many publishing channels open; 0 opens
	// one per Publish call.
	ChannelPoolSize int
}

// watermillConfig is the one place the broker behaviour is chosen.
func (c Config) watermillConfig() wmamqp.Config {
	if c.DialTimeout == 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.Prefetch == 0 {
		c.Prefetch = 1
	}
	return wmamqp.Config{
		Connection: wmamqp.ConnectionConfig{
			AmqpURI: c.URL,
			AmqpConfig: &amqp091.Config{
				Locale:    "en_US",
				Heartbeat: 10 * time.Second,
				Dial:      amqp091.DefaultDial(c.DialTimeout),
			},
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
		Publish: wmamqp.PublishConfig{
			GenerateRoutingKey: func(string) string { return "" },
			// Publish waits, message by message, for the broker's ack and
			// fails on a nack (watermill-amqp publisher.go publishMessage:
			// channel.Delivered()).
			ConfirmDelivery: true,
			ChannelPoolSize: c.ChannelPoolSize,
		},
		Consume: wmamqp.ConsumeConfig{
			Qos: wmamqp.QosConfig{PrefetchCount: c.Prefetch},
		},
		TopologyBuilder: topology{},
	}
}

// NewPublisher connects and returns a publisher owning its connection.
// An unreachable broker is a domain.CodeUnavailable error here, within
// DialTimeout.
func NewPublisher(cfg Config, logger *slog.Logger) (message.Publisher, error) {
	pub, err := wmamqp.NewPublisher(cfg.watermillConfig(), queue.NewLogger(logger))
	if err != nil {
		return nil, connectError("publisher", err)
	}
	return pub, nil
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
	return domain.Wrap(domain.CodeUnavailable, err, fmt.Sprintf("amqp: connect %s: %s", what, domain.SanitizeError(err)))
}
