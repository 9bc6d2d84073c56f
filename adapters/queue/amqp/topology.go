package amqp

import (
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	amqp091 "github.com/rabbitmq/amqp091-go"
)

// topology declares, for a topic, its exchange, its queue and the binding,
// from the publisher as well as from the subscriber. Watermill's default
// builder declares only the exchange when publishing, and a fanout exchange
// without a queue drops what it receives, while the broker still confirms
// it: a message published before the first worker would be lost.
type topology struct{}

var _ wmamqp.TopologyBuilder = topology{}

// ExchangeDeclare is what the publisher calls, once per topic; the exchange
// is named after the topic.
func (topology) ExchangeDeclare(ch *amqp091.Channel, exchange string, cfg wmamqp.Config) error {
	return declare(ch, exchange, cfg)
}

// BuildTopology is what the subscriber calls before consuming.
func (topology) BuildTopology(ch *amqp091.Channel, p wmamqp.BuildTopologyParams, cfg wmamqp.Config, _ watermill.LoggerAdapter) error {
	return declare(ch, p.Topic, cfg)
}

func declare(ch *amqp091.Channel, topic string, cfg wmamqp.Config) error {
	exchange, queue := cfg.Exchange.GenerateName(topic), cfg.Queue.GenerateName(topic)
	if err := ch.ExchangeDeclare(exchange, cfg.Exchange.Type, cfg.Exchange.Durable, false, false, false, nil); err != nil {
		return fmt.Errorf("declare exchange %s: %w", exchange, err)
	}
	if _, err := ch.QueueDeclare(queue, cfg.Queue.Durable, false, false, false, cfg.Queue.Arguments); err != nil {
		return fmt.Errorf("declare queue %s: %w", queue, err)
	}
	if err := ch.QueueBind(queue, cfg.QueueBind.GenerateRoutingKey(topic), exchange, false, nil); err != nil {
		return fmt.Errorf("bind queue %s: %w", queue, err)
	}
	return nil
}
