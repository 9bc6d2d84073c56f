// Package amqp is the queue on RabbitMQ (AMQP 0.9.1), written on amqp091
// directly: the publisher (publisher.go) and the subscriber the workers
// consume through (subscriber.go), which hands out up to Config.Prefetch
// messages at once and acknowledges each as its handler finishes.
//
// A topic is a durable fanout exchange and a durable queue of the same
// name bound to it; the workers of all processes consume that queue, so
// they share its messages. Both the publisher and the subscriber declare
// the exchange, the queue and the binding, so a message published while no
// worker has ever run waits in the queue instead of being dropped as
// unroutable. Messages are persistent, carry the event id as the AMQP
// message-id, and Publish returns only after the broker confirmed each of
// them (publisher confirms); a nack or a closed channel is an error.
//
// Queues are quorum queues by default (replicated over the cluster's
// nodes, the type RabbitMQ recommends for messages that must not be lost),
// or classic queues for deployments that declared them so before: a
// queue's type cannot change, and RabbitMQ refuses a declaration with
// other arguments (PRECONDITION_FAILED), which is the broker's
// misconfiguration, not the messages' fault (ports.ErrBrokerMisconfigured).
// A quorum queue also gets a delivery limit and a dead-letter queue of its
// own (topology.go).
package amqp

import (
	"time"

	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
)

// Queue types.
const (
	QueueQuorum  = "quorum"
	QueueClassic = "classic"
)

// DefaultDeliveryLimit is a quorum queue's delivery limit when Config does
// not set one (RabbitMQ 4 picks the same by default).
const DefaultDeliveryLimit = 20

// MaxPrefetch is the largest prefetch AMQP can ask for (basic.qos carries
// it in 16 bits).
const MaxPrefetch = 1<<16 - 1

// Config configures AMQP publishers and subscribers.
type Config struct {
	// URL is an amqp:// or amqps:// URI.
	URL string
	// DialTimeout bounds connecting, TLS and AMQP handshake (default 5s).
	DialTimeout time.Duration
	// Prefetch is how many unacknowledged messages the broker hands one
	// subscription, all handed out at once (basic.qos): a worker's
	// buffer of jobs in flight. Default 1: one at a time, fair sharing
	// between workers.
	Prefetch int
	// QueueType is the type of the queues once declares: QueueQuorum (the
	// default) or QueueClassic. Publishers and subscribers of one
	// deployment must agree, and match the queues that exist.
	QueueType string
	// DeliveryLimit, on quorum queues, is how many times a message is
	// handed to a worker without being acknowledged (its process died
	// with it, or gave it back because it could not record the job's
	// failure) before RabbitMQ moves it to the dead-letter queue
	// (DeadLetterQueue) instead: a message that crashes every worker does
	// not do so forever. 0 takes DefaultDeliveryLimit; negative sets no
	// limit and no dead-letter queue.
	DeliveryLimit int
	// Tracing, when set, gives each publish call of the Publisher a client
	// span (tracing.go). Nil: none, at no cost.
	Tracing trace.TracerProvider
}

func (c Config) withDefaults() Config {
	if c.DialTimeout == 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.Prefetch == 0 {
		c.Prefetch = 1
	}
	if c.QueueType == "" {
		c.QueueType = QueueQuorum
	}
	if c.DeliveryLimit == 0 {
		c.DeliveryLimit = DefaultDeliveryLimit
	}
	return c
}

// Validate says what is wrong with c, as a domain.CodeValidation error.
func (c Config) Validate() error {
	if c.QueueType != "" && c.QueueType != QueueQuorum && c.QueueType != QueueClassic {
		return domain.Errorf(domain.CodeValidation, "amqp: queue type %q must be %s or %s", c.QueueType, QueueQuorum, QueueClassic)
	}
	if c.Prefetch < 0 || c.Prefetch > MaxPrefetch {
		return domain.Errorf(domain.CodeValidation, "amqp: prefetch %d must be between 1 and %d", c.Prefetch, MaxPrefetch)
	}
	return nil
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

// watermillConfig is the one place the names and kinds of the exchanges,
// queues and bindings are chosen, which publishers and subscribers
// declare (topology.go); tests also build watermill's own publisher from
// it to compare with.
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
		TopologyBuilder: c.topology(),
	}
}

// topology is what publishers and subscribers of c declare.
func (c Config) topology() topology {
	c = c.withDefaults()
	return topology{queueType: c.QueueType, deliveryLimit: c.DeliveryLimit}
}

func connectError(what string, err error) error {
	return domain.Wrap(domain.CodeUnavailable, queue.Sanitized(err), "amqp: connect "+what)
}
