package redisstream_test

import (
	"context"
	neturl "net/url"
	"os"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

// redisURL is where the tests find Redis (REDIS_URL overrides).
func redisURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("REDIS_URL")
	if u == "" {
		u = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	queuetest.RequireBroker(t, "Redis", opts.Addr)
	return u
}

// cleanupStreams deletes the test's streams (and so their groups).
func cleanupStreams(t *testing.T, url string, streams ...string) {
	t.Cleanup(func() {
		opts, _ := redis.ParseURL(url)
		c := redis.NewClient(opts)
		defer c.Close()
		if err := c.Del(context.Background(), streams...).Err(); err != nil {
			t.Logf("delete test streams: %v", err)
		}
	})
}

func newRawPair(t *testing.T, prefix string) (message.Publisher, message.Subscriber) {
	url := redisURL(t)
	cfg := redisstream.Config{URL: url, ConsumerGroup: "once-workers-test"}
	pub, err := redisstream.NewPublisher(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatalf("NewPublisher: %v", err)
	}
	sub, err := redisstream.NewSubscriber(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatalf("NewSubscriber: %v", err)
	}
	cleanupStreams(t, url, queuetest.Topics(prefix)...)
	t.Cleanup(func() {
		_ = sub.Close()
		_ = pub.Close()
	})
	return pub, sub
}

func TestPublisherContract(t *testing.T) {
	queuetest.RunPublisherContract(t, func(t *testing.T, prefix string) (ports.Publisher, message.Subscriber) {
		pub, sub := newRawPair(t, prefix)
		return queue.NewPublisher(pub, prefix), sub
	})
}

func TestWorkerContract(t *testing.T) {
	queuetest.RunWorkerContract(t, newRawPair)
}

// behind returns the URL of the test's Redis with addr (a fault proxy) in
// place of its address, and read and write timeouts far beyond any test:
// only the publish's context can end a call that gets no answer.
func behind(t *testing.T, addr string) string {
	u, err := neturl.Parse(redisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	q := u.Query()
	q.Set("read_timeout", "5m")
	q.Set("write_timeout", "5m")
	u.RawQuery = q.Encode()
	return u.String()
}

func redisAddr(t *testing.T) string {
	opts, err := redis.ParseURL(redisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	return opts.Addr
}

func newPublisherAt(t *testing.T, addr, prefix string) ports.Publisher {
	raw, err := redisstream.NewPublisher(redisstream.Config{URL: behind(t, addr)}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	cleanupStreams(t, redisURL(t), queuetest.Topics(prefix)...)
	t.Cleanup(func() { _ = raw.Close() })
	return queue.NewPublisher(raw, prefix)
}

func TestPublishTimeoutsLeaveNothingBehind(t *testing.T) {
	queuetest.RunHangingBrokerContract(t, redisAddr(t), newPublisherAt)
}

func TestOutageSpendsNoAttempts(t *testing.T) {
	queuetest.RunOutageContract(t, redisAddr(t), newPublisherAt, func(t *testing.T) message.Subscriber {
		sub, err := redisstream.NewSubscriber(redisstream.Config{URL: redisURL(t), ConsumerGroup: "once-workers-test"}, queuetest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Close() })
		return sub
	})
}

func TestUnreachable(t *testing.T) {
	queuetest.RunUnreachableContract(t, func(t *testing.T) (ports.Publisher, error) {
		pub, err := redisstream.NewPublisher(redisstream.Config{URL: "redis://127.0.0.1:1/0", DialTimeout: time.Second}, queuetest.Logger(t))
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = pub.Close() })
		return queue.NewPublisher(pub, "test."), nil
	})
}

// TestPublishReturnsAfterXADD reads the stream right after Publish, with
// no subscriber: the entry is there, under the event id.
func TestPublishReturnsAfterXADD(t *testing.T) {
	url := redisURL(t)
	prefix := queuetest.Prefix()
	stream := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupStreams(t, url, stream)
	raw, err := redisstream.NewPublisher(redisstream.Config{URL: url, MaxLen: 1000}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := queue.NewPublisher(raw, prefix)
	t.Cleanup(func() { _ = pub.Close() })

	ids := []uuid.UUID{uuid.New(), uuid.New()}
	msgs := make([]ports.Message, len(ids))
	for i, id := range ids {
		msgs[i] = ports.Message{ID: id, Type: queuetest.TypeVerify, WorkspaceID: uuid.New(), Payload: []byte(`{}`)}
	}
	if err := pub.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}

	opts, _ := redis.ParseURL(url)
	c := redis.NewClient(opts)
	defer c.Close()
	entries, err := c.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(ids) {
		t.Fatalf("stream has %d entries, want %d", len(entries), len(ids))
	}
	for i, e := range entries {
		if got := e.Values["_watermill_message_uuid"]; got != ids[i].String() {
			t.Errorf("entry %d id = %v, want %s", i, got, ids[i])
		}
	}
}

// TestClaimsMessagesOfACrashedConsumer: consumer A takes a message and
// dies without acknowledging it; consumer B of the same group gets it once
// it has been idle for MaxIdleTime.
func TestClaimsMessagesOfACrashedConsumer(t *testing.T) {
	url := redisURL(t)
	prefix := queuetest.Prefix()
	topic := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupStreams(t, url, topic)
	cfg := redisstream.Config{URL: url, ConsumerGroup: "once-workers-test", MaxIdleTime: 300 * time.Millisecond, ClaimInterval: 100 * time.Millisecond}

	raw, err := redisstream.NewPublisher(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := queue.NewPublisher(raw, prefix)
	t.Cleanup(func() { _ = pub.Close() })
	want := ports.Message{ID: uuid.New(), Type: queuetest.TypeVerify, Payload: []byte(`{"n":1}`)}
	if err := pub.Publish(context.Background(), want); err != nil {
		t.Fatal(err)
	}

	a := cfg
	a.Consumer = "crashed"
	subA, err := redisstream.NewSubscriber(a, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctxA, crash := context.WithCancel(context.Background())
	msgsA, err := subA.Subscribe(ctxA, topic)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgsA:
		if m.UUID != want.ID.String() {
			t.Fatalf("A got %s", m.UUID)
		}
		// no Ack: the process dies here
	case <-time.After(10 * time.Second):
		t.Fatal("A received nothing")
	}
	crash()
	_ = subA.Close()

	b := cfg
	b.Consumer = "survivor"
	subB, err := redisstream.NewSubscriber(b, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = subB.Close() })
	ctxB, cancelB := context.WithCancel(context.Background())
	t.Cleanup(cancelB)
	msgsB, err := subB.Subscribe(ctxB, topic)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgsB:
		if m.UUID != want.ID.String() {
			t.Fatalf("B got %s, want the crashed consumer's %s", m.UUID, want.ID)
		}
		m.Ack()
	case <-time.After(10 * time.Second):
		t.Fatal("the crashed consumer's message was not claimed")
	}
}
