package amqp

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

// amqpURL is where the tests find RabbitMQ (AMQP_URL overrides).
func amqpURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("AMQP_URL")
	if u == "" {
		u = "amqp://guest:guest@127.0.0.1:5672/"
	}
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatalf("AMQP_URL: %v", err)
	}
	queuetest.RequireBroker(t, "RabbitMQ", parsed.Host)
	return u
}

// channel opens a plain AMQP channel for checks and cleanup.
func channel(t *testing.T, uri string) *amqp091.Channel {
	t.Helper()
	conn, err := amqp091.Dial(uri)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("channel: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return ch
}

// cleanupTopics deletes the queues and exchanges of the test's topics
// when it ends.
func cleanupTopics(t *testing.T, uri string, topics ...string) {
	t.Cleanup(func() { cleanupTopicsNow(t, uri, topics...) })
}

func cleanupTopicsNow(t *testing.T, uri string, topics ...string) {
	conn, err := amqp091.Dial(uri)
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	defer conn.Close()
	for _, topic := range topics {
		if err := DeleteTopology(conn, topic); err != nil {
			t.Logf("cleanup: %v", err)
		}
	}
}

// rawPairOf builds a publisher and a subscriber declaring queues of
// queueType.
func rawPairOf(queueType string) queuetest.NewRawPair {
	return func(t *testing.T, prefix string) (message.Publisher, message.Subscriber) {
		uri := amqpURL(t)
		cfg := Config{URL: uri, QueueType: queueType}
		pub, err := NewPublisher(cfg, queuetest.Logger(t))
		if err != nil {
			t.Fatalf("NewPublisher: %v", err)
		}
		sub, err := NewSubscriber(cfg, queuetest.Logger(t))
		if err != nil {
			_ = pub.Close()
			t.Fatalf("NewSubscriber: %v", err)
		}
		cleanupTopics(t, uri, queuetest.Topics(prefix)...)
		t.Cleanup(func() {
			_ = sub.Close()
			_ = pub.Close()
		})
		return pub, sub
	}
}

// queueTypes are the queue types the contracts run on: quorum (the
// default) and classic (existing deployments).
var queueTypes = []string{QueueQuorum, QueueClassic}

func TestPublisherContract(t *testing.T) {
	for _, qt := range queueTypes {
		t.Run(qt, func(t *testing.T) {
			queuetest.RunPublisherContract(t, func(t *testing.T, prefix string) (ports.Publisher, message.Subscriber) {
				pub, sub := rawPairOf(qt)(t, prefix)
				return queue.NewPublisher(pub, prefix), sub
			})
		})
	}
}

func TestWorkerContract(t *testing.T) {
	for _, qt := range queueTypes {
		t.Run(qt, func(t *testing.T) { queuetest.RunWorkerContract(t, rawPairOf(qt)) })
	}
}

func amqpAddr(t *testing.T) string {
	u, err := url.Parse(amqpURL(t))
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func newPublisherAt(t *testing.T, addr, prefix string) ports.Publisher {
	u, err := url.Parse(amqpURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	raw, err := NewPublisher(Config{URL: u.String()}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	cleanupTopics(t, amqpURL(t), queuetest.Topics(prefix)...)
	t.Cleanup(func() { _ = raw.Close() })
	return queue.NewPublisher(raw, prefix)
}

// Against a RabbitMQ that stops answering, every publish ends with its
// context; the heartbeat (30 s to notice) plays no part.
func TestPublishTimeoutsLeaveNothingBehind(t *testing.T) {
	queuetest.RunHangingBrokerContract(t, amqpAddr(t), newPublisherAt)
}

func TestOutageSpendsNoAttempts(t *testing.T) {
	queuetest.RunOutageContract(t, amqpAddr(t), newPublisherAt, func(t *testing.T) message.Subscriber {
		sub, err := NewSubscriber(Config{URL: amqpURL(t)}, queuetest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Close() })
		return sub
	})
}

func TestUnreachable(t *testing.T) {
	queuetest.RunUnreachableContract(t, func(t *testing.T) (ports.Publisher, error) {
		pub, err := NewPublisher(Config{URL: "amqp://guest:guest@127.0.0.1:1/", DialTimeout: time.Second}, queuetest.Logger(t))
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = pub.Close() })
		return queue.NewPublisher(pub, "test."), nil
	})
}

// TestPublishedMessageOnTheWire publishes with no subscriber and reads the
// queue with a plain AMQP client: the queue exists (the publisher declared
// it), the message is there once Publish returned, persistent, with the
// event id as its AMQP message-id.
func TestPublishedMessageOnTheWire(t *testing.T) {
	uri := amqpURL(t)
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupTopics(t, uri, topic)
	raw, err := NewPublisher(Config{URL: uri}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := queue.NewPublisher(raw, prefix)
	t.Cleanup(func() { _ = pub.Close() })

	want := ports.Message{ID: uuid.New(), Type: queuetest.TypeVerify, WorkspaceID: uuid.New(), Payload: []byte(`{"task_id":"t1"}`), Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	if err := pub.Publish(context.Background(), want); err != nil {
		t.Fatal(err)
	}

	d, ok, err := channel(t, uri).Get(topic, true)
	if err != nil || !ok {
		t.Fatalf("basic.get on %s right after Publish: ok=%v err=%v", topic, ok, err)
	}
	if d.MessageId != want.ID.String() {
		t.Errorf("message-id = %q, want the event id %s", d.MessageId, want.ID)
	}
	if d.DeliveryMode != amqp091.Persistent {
		t.Errorf("delivery mode = %d, want persistent", d.DeliveryMode)
	}
	if d.Type != want.Type || d.Headers[queue.MetadataEventType] != want.Type ||
		d.Headers[queue.MetadataWorkspaceID] != want.WorkspaceID.String() || d.Headers[queue.MetadataTraceparent] != want.Traceparent {
		t.Errorf("type %q, headers %v", d.Type, d.Headers)
	}
	if string(d.Body) != string(want.Payload) {
		t.Errorf("body = %s", d.Body)
	}

	// And the marshaler reads the id back from the message-id property.
	delete(d.Headers, uuidHeader)
	msg, err := Marshaler{}.Unmarshal(d)
	if err != nil || msg.UUID != want.ID.String() {
		t.Fatalf("Unmarshal: id %q, err %v", msg.UUID, err)
	}
}

// TestPublishWaitsForTheConfirm makes the broker refuse a message: a
// second queue bound to the topic's exchange, full at length 0 with
// x-overflow=reject-publish, makes RabbitMQ answer basic.nack. With
// publisher confirms the adapter reports it; the same publish without
// confirms returns nil, which is the failure confirms exist to catch.
func TestPublishWaitsForTheConfirm(t *testing.T) {
	uri := amqpURL(t)
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	full := topic + ".full"
	cleanupTopics(t, uri, topic)
	t.Cleanup(func() {
		if _, err := channel(t, uri).QueueDelete(full, false, false, false); err != nil {
			t.Logf("cleanup %s: %v", full, err)
		}
	})

	cfg := Config{URL: uri}
	raw, err := NewPublisher(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := queue.NewPublisher(raw, prefix)
	t.Cleanup(func() { _ = pub.Close() })
	// The first publish declares the topology and is confirmed.
	if err := pub.Publish(context.Background(), message1()); err != nil {
		t.Fatalf("first publish: %v", err)
	}

	ch := channel(t, uri)
	if _, err := ch.QueueDeclare(full, false, true, false, false, amqp091.Table{
		"x-max-length": int32(0),
		"x-overflow":   "reject-publish",
	}); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(full, "", topic, false, nil); err != nil {
		t.Fatal(err)
	}

	err = pub.Publish(context.Background(), message1())
	if !domain.IsCode(err, domain.CodeUnavailable) {
		t.Fatalf("Publish refused by the broker = %v, want %s", err, domain.CodeUnavailable)
	}
	t.Logf("refused publish: %v", err)

	noConfirms := cfg.watermillConfig()
	if !noConfirms.Publish.ConfirmDelivery {
		t.Fatal("publisher confirms are off in the adapter's config")
	}
	noConfirms.Publish.ConfirmDelivery = false
	unconfirmed, err := wmNewPublisher(noConfirms, t)
	if err != nil {
		t.Fatal(err)
	}
	if err := queue.NewPublisher(unconfirmed, prefix).Publish(context.Background(), message1()); err != nil {
		t.Fatalf("without confirms the refusal should go unnoticed, got %v", err)
	}
}

func message1() ports.Message {
	return ports.Message{ID: uuid.New(), Type: queuetest.TypeVerify, Payload: []byte(`{}`)}
}
