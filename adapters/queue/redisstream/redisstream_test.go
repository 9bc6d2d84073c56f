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
	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// redisURL is where the tests find the shared single Redis (REDIS_URL
// overrides).
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

// topologies are the Redis setups the contracts run on, by name: the
// shared single node, the package's private 3-master Cluster, and its
// Sentinel-managed primary, each through its ONCE_REDIS_URL form.
func topologies(t *testing.T) map[string]string {
	return map[string]string{
		"single":   redisURL(t),
		"cluster":  redistest.Cluster(t).URL(),
		"sentinel": redistest.Sentinel(t).URL(),
	}
}

// onEachTopology runs test as a subtest per topology.
func onEachTopology(t *testing.T, test func(t *testing.T, url string)) {
	for name, url := range topologies(t) {
		t.Run(name, func(t *testing.T) { test(t, url) })
	}
}

// client is a client of the Redis url names, closed with the test.
func client(t *testing.T, url string) redis.UniversalClient {
	t.Helper()
	c, _, err := redisconn.NewClient(redisconn.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// cleanupStreams deletes the test's streams (and so their groups), one
// command each: on a Cluster they may live on different masters.
func cleanupStreams(t *testing.T, url string, streams ...string) {
	c := client(t, url)
	t.Cleanup(func() {
		for _, s := range streams {
			if err := c.Del(context.Background(), s).Err(); err != nil {
				t.Logf("delete test stream %s: %v", s, err)
			}
		}
	})
}

func rawPairOn(url string) queuetest.NewRawPair {
	return func(t *testing.T, prefix string) (message.Publisher, message.Subscriber) {
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
}

func TestPublisherContract(t *testing.T) {
	onEachTopology(t, func(t *testing.T, url string) {
		queuetest.RunPublisherContract(t, func(t *testing.T, prefix string) (ports.Publisher, message.Subscriber) {
			pub, sub := rawPairOn(url)(t, prefix)
			return queue.NewPublisher(pub, prefix), sub
		})
	})
}

func TestWorkerContract(t *testing.T) {
	onEachTopology(t, func(t *testing.T, url string) { queuetest.RunWorkerContract(t, rawPairOn(url)) })
}

// Each subscriber is a consumer of its own, and takes over within a second
// what another left pending.
func TestConcurrentContract(t *testing.T) {
	onEachTopology(t, func(t *testing.T, url string) {
		queuetest.RunConcurrentContract(t, func(t *testing.T, prefix string, prefetch int) (message.Publisher, func() message.Subscriber) {
			cfg := redisstream.Config{
				URL: url, ConsumerGroup: "once-workers-test", Prefetch: prefetch,
				MaxIdleTime: 300 * time.Millisecond, ClaimInterval: 50 * time.Millisecond,
			}
			pub, err := redisstream.NewPublisher(cfg, queuetest.Logger(t))
			if err != nil {
				t.Fatalf("NewPublisher: %v", err)
			}
			cleanupStreams(t, url, queuetest.Topics(prefix)...)
			t.Cleanup(func() { _ = pub.Close() })
			return pub, func() message.Subscriber {
				sub, err := redisstream.NewSubscriber(cfg, queuetest.Logger(t))
				if err != nil {
					t.Fatalf("NewSubscriber: %v", err)
				}
				t.Cleanup(func() { _ = sub.Close() })
				return sub
			}
		})
	})
}

// A Redis Cluster node reached through a single-node URL answers MOVED
// for the streams of the other masters' slots: the broker's fault, not the
// events'. No attempt is spent, nothing is dead-lettered, and the
// Dispatcher says why.
func TestAClusterNodeAnsweringMovedSpendsNoAttempts(t *testing.T) {
	cluster := redistest.Cluster(t)
	prefix := queuetest.Prefix()
	for !cluster.Elsewhere(t, queue.Topic(prefix, queuetest.TypeVerify)) {
		prefix = queuetest.Prefix()
	}
	raw, err := redisstream.NewPublisher(redisstream.Config{URL: cluster.NodeURL()}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	queuetest.RunMisconfiguredContract(t, queue.NewPublisher(raw, prefix), "MOVED")
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

	entries, err := client(t, url).XRange(context.Background(), stream, "-", "+").Result()
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
	onEachTopology(t, claimsMessagesOfACrashedConsumer)
}

func claimsMessagesOfACrashedConsumer(t *testing.T, url string) {
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

// Through Sentinel, publishing follows a failover: what was published
// (and replicated) before is on the promoted replica, and publishes reach
// it once the Sentinel names it. A publish during the switch fails as the
// broker's fault (no attempt spent), or is taken by the old primary before
// it is demoted: Redis replicates asynchronously, and that write is lost
// when the old primary resyncs (docs/brokers.md says how to narrow the
// window), so the test publishes until one lands on the new primary.
func TestPublishingFollowsASentinelFailover(t *testing.T) {
	s := redistest.Sentinel(t)
	url := s.URL()
	prefix := queuetest.Prefix()
	stream := queue.Topic(prefix, queuetest.TypeVerify)
	cleanupStreams(t, url, stream)
	raw, err := redisstream.NewPublisher(redisstream.Config{URL: url}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := queue.NewPublisher(raw, prefix)
	t.Cleanup(func() { _ = pub.Close() })
	before := ports.Message{ID: uuid.New(), Type: queuetest.TypeVerify, Payload: []byte(`{}`)}
	if err := pub.Publish(context.Background(), before); err != nil {
		t.Fatal(err)
	}
	// The replica has it before it is promoted.
	if err := client(t, url).Do(context.Background(), "WAIT", 1, 5000).Err(); err != nil {
		t.Fatal(err)
	}

	promoted := s.Failover(t)
	node := redis.NewClient(&redis.Options{Addr: promoted})
	defer node.Close()
	holds := func(id uuid.UUID) bool {
		entries, err := node.XRange(context.Background(), stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Values["_watermill_message_uuid"] == id.String() {
				return true
			}
		}
		return false
	}
	if !holds(before.ID) {
		t.Fatalf("the promoted primary lost %s, replicated before the failover", before.ID)
	}
	refused, elsewhere := 0, 0
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no publish reached the promoted primary within 30s (%d refused, %d taken by the old one)", refused, elsewhere)
		}
		after := ports.Message{ID: uuid.New(), Type: queuetest.TypeVerify, Payload: []byte(`{}`)}
		err := pub.Publish(context.Background(), after)
		if err != nil {
			if !ports.BrokersFault(err) {
				t.Fatalf("publish during the failover: %v, want the broker's fault", err)
			}
			refused++
			continue
		}
		if holds(after.ID) {
			break
		}
		elsewhere++
	}
	t.Logf("publishes during the switch: %d refused (no attempt spent), %d taken by the old primary", refused, elsewhere)
}
