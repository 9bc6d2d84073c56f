package redisstream_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

const testGroup = "once-workers-test"

// Close sends the acks collected before it returns, and leaves what was
// not acked pending with this consumer, for another to take over.
func TestCloseSendsTheAcksAndLeavesTheRestPending(t *testing.T) {
	url := redisURL(t)
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupStreams(t, url, topic)
	cfg := redisstream.Config{URL: url, ConsumerGroup: testGroup, Consumer: "closing", Prefetch: 8}
	publishMessages(t, cfg, prefix, 5)

	sub, err := redisstream.NewSubscriber(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := sub.Subscribe(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		m := receive(t, msgs)
		if i < 3 {
			m.Ack()
		}
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if _, open := <-msgs; open {
		t.Fatal("a message after Close")
	}

	pending, err := client(t, url).XPending(context.Background(), topic, testGroup).Result()
	if err != nil {
		t.Fatal(err)
	}
	if pending.Count != 2 || pending.Consumers["closing"] != 2 {
		t.Fatalf("pending after Close = %+v, want the 2 messages not acked, with consumer closing", pending)
	}
}

func publishMessages(t testing.TB, cfg redisstream.Config, prefix string, n int) {
	t.Helper()
	raw, err := redisstream.NewPublisher(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := queue.NewPublisher(raw, prefix)
	defer pub.Close()
	const batch = 1000
	for sent := 0; sent < n; {
		msgs := make([]ports.Message, min(batch, n-sent))
		for i := range msgs {
			msgs[i] = ports.Message{ID: uuid.New(), Type: queuetest.TypeVerify, Payload: []byte(`{}`)}
		}
		if err := pub.Publish(context.Background(), msgs...); err != nil {
			t.Fatal(err)
		}
		sent += len(msgs)
	}
}

func receive(t testing.TB, msgs <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case m, ok := <-msgs:
		if !ok {
			t.Fatal("subscription closed")
		}
		return m
	case <-time.After(15 * time.Second):
		t.Fatal("no message within 15s")
		return nil
	}
}

// BenchmarkConsume receives and acks b.N messages published beforehand,
// the window full: what a worker whose jobs take no time costs the
// subscriber. Acks go out in batches (acks.go).
func BenchmarkConsume(b *testing.B) {
	u := os.Getenv("REDIS_URL")
	if u == "" {
		u = "redis://127.0.0.1:6379/0"
	}
	queuetest.RequireBroker(b, "Redis", "127.0.0.1:6379")
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	cfg := redisstream.Config{URL: u, ConsumerGroup: testGroup, Prefetch: 512}
	publishMessages(b, cfg, prefix, b.N)
	defer func() {
		c, _, _ := redisconn.NewClient(redisconn.Config{URL: u})
		_ = c.Del(context.Background(), topic).Err()
		_ = c.Close()
	}()
	sub, err := redisstream.NewSubscriber(cfg, queuetest.Logger(b))
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	b.ResetTimer()
	msgs, err := sub.Subscribe(context.Background(), topic)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		receive(b, msgs).Ack()
	}
	b.StopTimer()
}

// Close waits for everything a subscription started: readers, senders,
// the messages held (one nacked and waiting to come again), the acker.
func TestCloseLeavesNoGoroutineBehind(t *testing.T) {
	url := redisURL(t)
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupStreams(t, url, queuetest.Topics(prefix)...)
	cfg := redisstream.Config{URL: url, ConsumerGroup: testGroup, Prefetch: 4, NackDelay: time.Hour}
	publishMessages(t, cfg, prefix, 3)
	sub, err := redisstream.NewSubscriber(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := sub.Subscribe(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Subscribe(context.Background(), queue.Topic(prefix, queuetest.TypeSync)); err != nil {
		t.Fatal(err)
	}
	receive(t, msgs).Ack()
	receive(t, msgs).Nack()
	receive(t, msgs) // held
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	queuetest.NoGoroutinesIn(t, "github.com/oncehq/once/adapters/queue", "github.com/oncehq/once/adapters/queue/redisstream")
	if _, err := sub.Subscribe(context.Background(), topic); !errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Errorf("Subscribe after Close = %v, want ports.ErrBrokerUnreachable", err)
	}
}
