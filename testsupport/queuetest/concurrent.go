package queuetest

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/ports"
)

// NewConcurrentBroker builds, for one test, a publisher on the broker under
// test and a way to make its subscribers, whose subscriptions hand out up
// to prefetch messages unacknowledged. Each subscriber newSubscriber makes
// is a consumer of its own where the broker names consumers (Redis: its
// own consumer name, with a MaxIdleTime short enough that it takes over
// within seconds what an ended subscription left pending). It registers
// every cleanup with t.
type NewConcurrentBroker func(t *testing.T, prefix string, prefetch int) (pub message.Publisher, newSubscriber func() message.Subscriber)

// settle is how long the contract watches for a message that must not
// come: longer than a takeover of an idle message takes on a broker that
// claims them (NewConcurrentBroker).
const settle = time.Second

// RunConcurrentContract checks a broker whose subscriptions hand out many
// messages at once, keeping at-least-once: a window of prefetch messages
// handed out before any ack and never more, a nacked message delivered
// again and an acked one never, what an ended subscription held taken over
// by another, and competing subscriptions sharing the messages.
func RunConcurrentContract(t *testing.T, newBroker NewConcurrentBroker) {
	t.Run("hands out prefetch messages before any is acked, and no more until one is", func(t *testing.T) {
		const prefetch = 4
		pub, newSubscriber, topic := concurrentBroker(t, newBroker, prefetch)
		want := publishN(t, pub, topic, prefetch+2)
		s := subscribe(t, newSubscriber(), topic)

		held := s.receive(t, prefetch)
		s.quiet(t, settle/2)
		held[0].Ack()
		next := s.receive(t, 1)
		s.quiet(t, settle/2)
		for _, m := range append(held[1:], next...) {
			m.Ack()
		}
		last := s.take(t, 1)
		checkDelivered(t, want, append(append(held, next...), last...))
		s.quiet(t, settle)
	})

	t.Run("delivers a nacked message again and an acked one never", func(t *testing.T) {
		pub, newSubscriber, topic := concurrentBroker(t, newBroker, 4)
		want := publishN(t, pub, topic, 2)
		s := subscribe(t, newSubscriber(), topic)

		got := s.receive(t, 2)
		got[0].Nack()
		got[1].Ack()
		again := s.take(t, 1)
		if again[0].UUID != got[0].UUID {
			t.Fatalf("after a nack of %s, got %s", got[0].UUID, again[0].UUID)
		}
		checkDelivered(t, want, []*message.Message{got[1], again[0]})
		s.quiet(t, settle)
		// Nor after the subscription ended: its acks reached the broker.
		s.stop()
		subscribe(t, newSubscriber(), topic).quiet(t, settle)
	})

	t.Run("leaves what an ended subscription held to another", func(t *testing.T) {
		pub, newSubscriber, topic := concurrentBroker(t, newBroker, 4)
		want := publishN(t, pub, topic, 3)
		first := subscribe(t, newSubscriber(), topic)
		first.receive(t, 3)
		first.abandon() // a crash: neither acked nor nacked

		second := subscribe(t, newSubscriber(), topic)
		checkDelivered(t, want, second.take(t, 3))
		second.quiet(t, settle)
	})

	t.Run("competing subscriptions share the messages, each once, and leave alone what the other holds", func(t *testing.T) {
		const prefetch = 3
		pub, newSubscriber, topic := concurrentBroker(t, newBroker, prefetch)
		a := subscribe(t, newSubscriber(), topic)
		want := publishN(t, pub, topic, prefetch+1)
		got := a.receive(t, prefetch)
		b := subscribe(t, newSubscriber(), topic)
		got = append(got, b.receive(t, 1)...)

		// b has room, and a holds its messages longer than a broker lets
		// a message idle before another consumer takes it over: a live
		// subscription's messages are not taken over all the same.
		b.quiet(t, settle)
		for _, m := range got {
			m.Ack()
		}
		checkDelivered(t, want, got)
		a.quiet(t, settle/10)
	})
}

// concurrentBroker builds the broker of one subtest and names its topic.
func concurrentBroker(t *testing.T, newBroker NewConcurrentBroker, prefetch int) (message.Publisher, func() message.Subscriber, string) {
	prefix := Prefix()
	pub, newSubscriber := newBroker(t, prefix, prefetch)
	return pub, newSubscriber, queue.Topic(prefix, TypeVerify)
}

// publishN publishes n messages to topic through pub and returns them.
func publishN(t *testing.T, pub message.Publisher, topic string, n int) []ports.Message {
	t.Helper()
	want := make([]ports.Message, n)
	wms := make([]*message.Message, n)
	for i := range want {
		want[i] = newMessage(TypeVerify, i)
		wms[i] = queue.ToMessage(want[i])
	}
	if err := pub.Publish(topic, wms...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return want
}

// abandon ends the subscription without acking or nacking anything, as a
// process that dies does.
func (s *subscription) abandon() {
	s.cancel()
	timeout := time.After(wait)
	for {
		select {
		case _, ok := <-s.msgs:
			if !ok {
				return
			}
		case <-timeout:
			return
		}
	}
}
