package amqp

import (
	"context"
	"errors"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/faultproxy"
	"github.com/oncehq/once/testsupport/queuetest"
)

// within bounds every wait for something the broker does.
const within = 15 * time.Second

// subEnv is a topic of its own on the test broker, with a publisher.
type subEnv struct {
	t     *testing.T
	uri   string
	cfg   Config // of the publisher, and of the subscribers unless told
	topic string
	pub   ports.Publisher
	check *amqp091.Channel
}

func newSubEnv(t *testing.T, queueType string) *subEnv {
	uri := amqpURL(t)
	prefix := queuetest.Prefix()
	e := &subEnv{t: t, uri: uri, cfg: Config{URL: uri, QueueType: queueType}, topic: queue.Topic(prefix, queuetest.TypeVerify)}
	cleanupTopics(t, uri, e.topic)
	raw, err := NewPublisher(e.cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	e.pub = queue.NewPublisher(raw, prefix)
	e.check = channel(t, uri)
	return e
}

// subscriber connects a subscriber with the env's configuration and the
// prefetch given, to url ("" for the broker's).
func (e *subEnv) subscriber(prefetch int, url string) *Subscriber {
	e.t.Helper()
	cfg := e.cfg
	cfg.Prefetch = prefetch
	if url != "" {
		cfg.URL = url
	}
	sub, err := NewSubscriber(cfg, queuetest.Logger(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = sub.Close() })
	return sub.(*Subscriber)
}

func (e *subEnv) subscribe(sub message.Subscriber) (<-chan *message.Message, context.CancelFunc) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	msgs, err := sub.Subscribe(ctx, e.topic)
	if err != nil {
		e.t.Fatalf("Subscribe: %v", err)
	}
	return msgs, cancel
}

// publish publishes n messages and returns their ids.
func (e *subEnv) publish(n int) map[string]bool {
	e.t.Helper()
	ids := map[string]bool{}
	msgs := make([]ports.Message, n)
	for i := range msgs {
		msgs[i] = message1()
		ids[msgs[i].ID.String()] = true
	}
	if err := e.pub.Publish(context.Background(), msgs...); err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// ready is how many messages wait in the queue, handed to no consumer.
func (e *subEnv) ready() int {
	e.t.Helper()
	q, err := e.check.QueueDeclarePassive(e.topic, true, false, false, false, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return q.Messages
}

// eventuallyReady waits until n messages wait in the queue.
func (e *subEnv) eventuallyReady(n int) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for got := e.ready(); got != n; got = e.ready() {
		if time.Now().After(deadline) {
			e.t.Fatalf("%d messages ready in the queue, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// receive takes the next n messages, unsettled.
func receive(t *testing.T, msgs <-chan *message.Message, n int) []*message.Message {
	t.Helper()
	var got []*message.Message
	timeout := time.After(within)
	for len(got) < n {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("subscription closed after %d of %d messages", len(got), n)
			}
			got = append(got, m)
		case <-timeout:
			t.Fatalf("received %d of %d messages within %s", len(got), n, within)
		}
	}
	return got
}

// noMore fails if a message arrives within d. (It cannot fail wrongly: a
// slow broker only makes it pass.)
func noMore(t *testing.T, msgs <-chan *message.Message, d time.Duration) {
	t.Helper()
	select {
	case m, ok := <-msgs:
		if ok {
			t.Fatalf("message %s handed out beyond the prefetch", m.UUID)
		}
	case <-time.After(d):
	}
}

// With prefetch N the subscriber hands out N messages before any is
// acknowledged, never more, and one more for each settled; acks in any
// order settle them all.
func TestSubscriberHandsOutPrefetchBeforeAnyAck(t *testing.T) {
	for _, qt := range queueTypes {
		t.Run(qt, func(t *testing.T) {
			const prefetch, extra = 8, 3
			e := newSubEnv(t, qt)
			e.publish(prefetch + extra)
			msgs, _ := e.subscribe(e.subscriber(prefetch, ""))

			first := receive(t, msgs, prefetch)
			e.eventuallyReady(extra)
			noMore(t, msgs, 200*time.Millisecond)

			// Settle out of order: the last first, one by one.
			first[prefetch-1].Ack()
			more := receive(t, msgs, 1)
			noMore(t, msgs, 100*time.Millisecond)
			for i := prefetch - 2; i >= 0; i-- {
				first[i].Ack()
			}
			more = append(more, receive(t, msgs, extra-1)...)
			for _, m := range more {
				m.Ack()
			}
			e.eventuallyReady(0)
		})
	}
}

// A nacked message comes back, marked redelivered, while the others stay
// with the handler.
func TestSubscriberNackRedelivers(t *testing.T) {
	e := newSubEnv(t, QueueQuorum)
	e.publish(2)
	msgs, _ := e.subscribe(e.subscriber(2, ""))
	got := receive(t, msgs, 2)
	got[0].Nack()
	again := receive(t, msgs, 1)[0]
	if again.UUID != got[0].UUID || !wmamqp.IsMessageRedelivered(again) {
		t.Fatalf("after a nack of %s got %s (redelivered: %v)", got[0].UUID, again.UUID, wmamqp.IsMessageRedelivered(again))
	}
	again.Ack()
	got[1].Ack()
	e.eventuallyReady(0)
}

// What a closed subscriber held unsettled goes to another subscriber;
// nothing is lost and nothing is left running.
func TestClosedSubscribersUnsettledGoToAnother(t *testing.T) {
	const n = 5
	e := newSubEnv(t, QueueQuorum)
	want := e.publish(n)
	baseline := stableGoroutines()

	first := e.subscriber(n, "")
	msgs, _ := e.subscribe(first)
	receive(t, msgs, n)
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, open := <-msgs; open {
		t.Fatal("the output of a closed subscriber is still open")
	}
	checkNoLeak(t, baseline)
	if _, err := first.Subscribe(context.Background(), e.topic); !errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Fatalf("Subscribe on a closed subscriber = %v", err)
	}

	msgs, _ = e.subscribe(e.subscriber(n, ""))
	for _, m := range receive(t, msgs, n) {
		if !want[m.UUID] {
			t.Errorf("unexpected message %s", m.UUID)
		}
		delete(want, m.UUID)
		m.Ack()
	}
	e.eventuallyReady(0)
}

// Subscriptions on the same queue share its messages: with prefetch 2
// each, four messages go two and two before any ack.
func TestCompetingSubscriptionsShare(t *testing.T) {
	e := newSubEnv(t, QueueQuorum)
	a, _ := e.subscribe(e.subscriber(2, ""))
	b, _ := e.subscribe(e.subscriber(2, ""))
	e.publish(4)
	got := append(receive(t, a, 2), receive(t, b, 2)...)
	seen := map[string]bool{}
	for _, m := range got {
		if seen[m.UUID] {
			t.Fatalf("message %s handed to both", m.UUID)
		}
		seen[m.UUID] = true
		m.Ack()
	}
	e.eventuallyReady(0)
}

// When the subscription's context ends, the output closes, and the
// messages handed out before can still be acknowledged: a job that
// finishes as the worker stops is not run again. What arrived but was not
// handed out goes back at once.
func TestSubscriptionEndedStillSettles(t *testing.T) {
	const n = 3
	e := newSubEnv(t, QueueQuorum)
	e.publish(n + 2)
	msgs, cancel := e.subscribe(e.subscriber(n, ""))
	got := receive(t, msgs, n)
	cancel()
	for range msgs {
		t.Fatal("a message handed out after the context ended")
	}
	handed := map[string]bool{}
	for _, m := range got {
		if m.Context().Err() == nil {
			t.Fatal("a message's context is not the subscription's")
		}
		handed[m.UUID] = true
		m.Ack()
	}
	// Once they are settled the subscription lets its channel go.
	e.eventuallyConsumers(0)
	e.eventuallyReady(2)
	next, _ := e.subscribe(e.subscriber(n+2, ""))
	for _, m := range receive(t, next, 2) {
		if handed[m.UUID] {
			t.Fatalf("message %s acked after the context ended was delivered again", m.UUID)
		}
		m.Ack()
	}
	e.eventuallyReady(0)
}

// eventuallyConsumers waits until the queue has n consumers.
func (e *subEnv) eventuallyConsumers(n int) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		q, err := e.check.QueueDeclarePassive(e.topic, true, false, false, false, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		if q.Consumers == n {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d consumers on the queue, want %d", q.Consumers, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A connection cut under the subscriber (a TCP proxy taken down and
// brought back) loses nothing: the subscription stays open, consumes
// again once the broker is reachable, and every message is delivered and
// acknowledged; the late acks of the lost channel are dropped quietly.
func TestSubscriberConsumesAgainAfterTheConnectionIsCut(t *testing.T) {
	const n, prefetch = 20, 4
	e := newSubEnv(t, QueueQuorum)
	proxy := faultproxy.Start(t, amqpAddr(t))
	sub := e.subscriber(prefetch, strings.Replace(e.uri, amqpAddr(t), proxy.Addr(), 1))
	want := e.publish(n)
	msgs, _ := e.subscribe(sub)

	// Every message held is acked only once the connection is cut: an ack
	// sent just before the cut may or may not reach the broker (the
	// subscriber sends it from its own goroutine), and one that did not
	// makes a second delivery this test would leave in the queue.
	held := receive(t, msgs, prefetch)
	acked := map[string]bool{}
	proxy.Down()
	for _, m := range held {
		m.Ack() // on a lost channel: dropped, redelivered later
	}
	// Up only once the subscriber saw its connection go: it tries again
	// against a broker that is away before it is back.
	sub.eventuallyDisconnected(t)
	proxy.Up(t)

	for len(acked) < n {
		m := receive(t, msgs, 1)[0]
		if !want[m.UUID] {
			t.Fatalf("unexpected message %s", m.UUID)
		}
		acked[m.UUID] = true
		m.Ack()
	}
	e.eventuallyReady(0)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	e.eventuallyReady(0) // every one was acked, none was only held
}

// A subscriber whose broker went away since it connected cannot subscribe,
// and says the broker is unreachable.
func TestSubscribeToAnUnreachableBroker(t *testing.T) {
	e := newSubEnv(t, QueueQuorum)
	proxy := faultproxy.Start(t, amqpAddr(t))
	sub := e.subscriber(1, strings.Replace(e.uri, amqpAddr(t), proxy.Addr(), 1))
	proxy.Down()
	_, err := sub.Subscribe(context.Background(), e.topic)
	if !errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Fatalf("Subscribe with the broker away = %v, want %v", err, ports.ErrBrokerUnreachable)
	}
}

// stableGoroutines returns the goroutine count once it stopped moving for
// a few samples (or after a few seconds).
func stableGoroutines() int {
	n, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(5 * time.Second); same < 5 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// checkNoLeak fails unless the goroutines come back to baseline.
func checkNoLeak(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(within)
	n := runtime.NumGoroutine()
	for n > baseline && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > baseline {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Fatalf("%d goroutines after Close, %d before\n%s", n, baseline, stacks.String())
	}
}

// eventuallyDisconnected waits until s noticed that its connection is gone.
func (s *Subscriber) eventuallyDisconnected(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s.mu.Lock()
		gone := s.conn == nil || s.conn.IsClosed()
		s.mu.Unlock()
		if gone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the subscriber did not notice its connection was cut")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A prefetch AMQP cannot carry is refused, not wrapped around to another.
func TestPrefetchOutOfRangeIsRefused(t *testing.T) {
	for _, p := range []int{-1, MaxPrefetch + 1} {
		if err := (Config{URL: "amqp://127.0.0.1:1/", Prefetch: p}).Validate(); err == nil {
			t.Errorf("prefetch %d accepted", p)
		}
	}
	if err := (Config{URL: "amqp://127.0.0.1:1/", Prefetch: MaxPrefetch}).Validate(); err != nil {
		t.Errorf("prefetch %d refused: %v", MaxPrefetch, err)
	}
}
