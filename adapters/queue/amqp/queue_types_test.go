package amqp

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

// The queues once declares are of the configured type: quorum by default,
// with the delivery limit and a dead-letter queue; classic on request,
// as existing deployments declared them.
func TestQueuesAreOfTheConfiguredType(t *testing.T) {
	uri := amqpURL(t)
	for _, c := range []struct {
		cfg  Config
		want amqp091.Table
	}{
		{Config{URL: uri}, amqp091.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(DefaultDeliveryLimit)}},
		{Config{URL: uri, DeliveryLimit: -1}, amqp091.Table{"x-queue-type": "quorum"}},
		{Config{URL: uri, QueueType: QueueClassic}, amqp091.Table{"x-queue-type": "classic"}},
	} {
		prefix := queuetest.Prefix()
		topic := queue.Topic(prefix, queuetest.TypeVerify)
		cleanupTopics(t, uri, topic)
		raw, err := NewPublisher(c.cfg, queuetest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = raw.Close() })
		if err := queue.NewPublisher(raw, prefix).Publish(context.Background(), message1()); err != nil {
			t.Fatal(err)
		}
		// A passive declaration with other arguments is not checked, an
		// active one is: redeclaring with the expected arguments must pass.
		args := amqp091.Table{}
		for k, v := range c.want {
			args[k] = v
		}
		if c.want["x-delivery-limit"] != nil {
			args["x-dead-letter-exchange"] = ""
			args["x-dead-letter-routing-key"] = DeadLetterQueue(topic)
			args["x-dead-letter-strategy"] = "at-least-once"
			args["x-overflow"] = "reject-publish"
		}
		if _, err := channel(t, uri).QueueDeclare(topic, true, false, false, false, args); err != nil {
			t.Fatalf("%+v: the queue was not declared with %v: %v", c.cfg, args, err)
		}
	}
	if _, err := NewPublisher(Config{URL: uri, QueueType: "lazy"}, queuetest.Logger(t)); err == nil {
		t.Fatal("an unknown queue type was accepted")
	}
}

// A queue that exists as a classic queue, met by a deployment declaring
// quorum queues: RabbitMQ refuses the declaration (PRECONDITION_FAILED).
// The broker's fault, not the events': no attempt is spent, nothing is
// dead-lettered, the Dispatcher says why; a worker does not start, saying
// why.
func TestAQueueOfAnotherTypeSpendsNoAttempts(t *testing.T) {
	uri := amqpURL(t)
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupTopics(t, uri, topic)
	if _, err := channel(t, uri).QueueDeclare(topic, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := NewPublisher(Config{URL: uri}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	queuetest.RunMisconfiguredContract(t, queue.NewPublisher(raw, prefix), "PRECONDITION_FAILED")

	sub, err := NewSubscriber(Config{URL: uri}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	_, err = sub.Subscribe(context.Background(), topic)
	var m *queue.MisconfiguredError
	if !errors.As(err, &m) || !errors.Is(err, ports.ErrBrokerMisconfigured) {
		t.Fatalf("Subscribe to a queue of another type = %v, want a *queue.MisconfiguredError", err)
	}
	t.Logf("subscribe: %v", err)
}

// A message a worker keeps giving back (or dies with) is moved to the
// dead-letter queue once the delivery limit is reached, not delivered
// forever; nothing is lost.
func TestTheDeliveryLimitMovesAMessageToTheDeadLetterQueue(t *testing.T) {
	uri := amqpURL(t)
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupTopics(t, uri, topic)
	cfg := Config{URL: uri, DeliveryLimit: 2}
	raw, err := NewPublisher(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	want := message1()
	if err := queue.NewPublisher(raw, prefix).Publish(context.Background(), want); err != nil {
		t.Fatal(err)
	}

	sub, err := NewSubscriber(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	msgs, err := sub.Subscribe(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.DeliveryLimit + 1 {
		select {
		case m := <-msgs:
			if m.UUID != want.ID.String() {
				t.Fatalf("delivery %d: %s", i, m.UUID)
			}
			m.Nack()
		case <-time.After(15 * time.Second):
			t.Fatalf("delivery %d did not come", i)
		}
	}

	ch := channel(t, uri)
	deadline := time.Now().Add(15 * time.Second)
	for {
		d, ok, err := ch.Get(DeadLetterQueue(topic), true)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if d.MessageId != want.ID.String() || d.Headers["x-first-death-reason"] != "delivery_limit" {
				t.Fatalf("dead letter %s, headers %v", d.MessageId, d.Headers)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the message did not reach the dead-letter queue")
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case m := <-msgs:
		t.Fatalf("delivered again after the limit: %s", m.UUID)
	case <-time.After(300 * time.Millisecond):
	}
}
