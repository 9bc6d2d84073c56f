package amqp

import (
	"errors"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
)

// DeadLetterQueue is where a quorum queue moves the messages that reached
// its delivery limit: "<queue>.dead-letter", a quorum queue of its own
// that nobody consumes; operators look into it (see docs/brokers.md).
func DeadLetterQueue(queue string) string { return queue + ".dead-letter" }

// topology declares, for a topic, its exchange, its queue and the binding,
// from the publisher as well as from the subscriber. Watermill's default
// builder declares only the exchange when publishing, and a fanout exchange
// without a queue drops what it receives, while the broker still confirms
// it: a message published before the first worker would be lost.
//
// A quorum queue with a delivery limit is declared with it, and with its
// dead-letter queue (through the default exchange, at-least-once: a
// message is removed from the queue only once the dead-letter queue has
// it, which RabbitMQ allows with x-overflow reject-publish). The limit is
// RabbitMQ's own count of deliveries that did not end in an
// acknowledgement; the worker's retries (queue.Worker) run inside one
// delivery and end in one, so they do not count.
type topology struct {
	queueType     string
	deliveryLimit int
}

var _ wmamqp.TopologyBuilder = topology{}

// ExchangeDeclare is what the publisher calls, once per topic; the exchange
// is named after the topic.
func (t topology) ExchangeDeclare(ch *amqp091.Channel, exchange string, cfg wmamqp.Config) error {
	return t.declare(ch, exchange, cfg)
}

// BuildTopology is what the subscriber calls before consuming.
func (t topology) BuildTopology(ch *amqp091.Channel, p wmamqp.BuildTopologyParams, cfg wmamqp.Config, _ watermill.LoggerAdapter) error {
	return t.declare(ch, p.Topic, cfg)
}

func (t topology) declare(ch *amqp091.Channel, topic string, cfg wmamqp.Config) error {
	exchange, q := cfg.Exchange.GenerateName(topic), cfg.Queue.GenerateName(topic)
	if err := ch.ExchangeDeclare(exchange, cfg.Exchange.Type, cfg.Exchange.Durable, false, false, false, nil); err != nil {
		return t.refused("exchange", err)
	}
	args := amqp091.Table{"x-queue-type": t.queueType}
	if t.queueType == QueueQuorum && t.deliveryLimit > 0 {
		dead := DeadLetterQueue(q)
		if _, err := ch.QueueDeclare(dead, true, false, false, false, amqp091.Table{"x-queue-type": QueueQuorum}); err != nil {
			return t.refused("dead-letter queue", err)
		}
		args["x-delivery-limit"] = int64(t.deliveryLimit)
		args["x-dead-letter-exchange"] = ""
		args["x-dead-letter-routing-key"] = dead
		args["x-dead-letter-strategy"] = "at-least-once"
		args["x-overflow"] = "reject-publish"
	}
	if _, err := ch.QueueDeclare(q, cfg.Queue.Durable, false, false, false, args); err != nil {
		return t.refused("queue", err)
	}
	if err := ch.QueueBind(q, cfg.QueueBind.GenerateRoutingKey(topic), exchange, false, nil); err != nil {
		return t.refused("queue's binding", err)
	}
	return nil
}

// refused says why the broker refused to declare what (RabbitMQ's answer
// names it): when it is a misconfiguration (see misconfigured), as a
// *queue.MisconfiguredError saying what to change.
func (t topology) refused(what string, err error) error {
	if !misconfigured(err) {
		return fmt.Errorf("declare %s: %w", what, err)
	}
	reason := "RabbitMQ refused to declare the " + what
	if amqpCode(err) == amqp091.PreconditionFailed {
		declared := t.queueType
		if t.queueType == QueueQuorum && t.deliveryLimit > 0 {
			declared += fmt.Sprintf(", delivery limit %d", t.deliveryLimit)
		}
		reason += fmt.Sprintf(": it exists with other arguments (once declares %s; see docs/brokers.md)", declared)
	}
	return &queue.MisconfiguredError{Broker: "amqp", Reason: reason, Err: err}
}

// DeleteTopology deletes what publishers and subscribers declare for topic:
// its queue, the queue's dead-letter queue and its exchange, with the
// messages in them: for tests and benchmarks cleaning up after themselves
// on a shared broker. Each deletion runs on a channel of its own (the
// broker closes a channel over a failed one); what is not there is not an
// error.
func DeleteTopology(conn *amqp091.Connection, topic string) error {
	var errs []error
	for _, del := range []func(*amqp091.Channel) error{
		func(ch *amqp091.Channel) error { _, err := ch.QueueDelete(topic, false, false, false); return err },
		func(ch *amqp091.Channel) error {
			_, err := ch.QueueDelete(DeadLetterQueue(topic), false, false, false)
			return err
		},
		func(ch *amqp091.Channel) error { return ch.ExchangeDelete(topic, false, false) },
	} {
		ch, err := conn.Channel()
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := del(ch); err != nil {
			errs = append(errs, fmt.Errorf("amqp: delete the topology of %s: %w", topic, err))
		}
		_ = ch.Close()
	}
	return errors.Join(errs...)
}
