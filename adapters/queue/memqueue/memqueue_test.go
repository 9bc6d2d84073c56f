package memqueue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

func newRawPair(t *testing.T, _ string) (message.Publisher, message.Subscriber) {
	pub, sub := memqueue.New(memqueue.Config{})
	t.Cleanup(func() { _ = pub.Close() })
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

// Every subscriber of one queue is the queue itself: its subscriptions
// compete as consumers of a broker do.
func TestConcurrentContract(t *testing.T) {
	queuetest.RunConcurrentContract(t, func(t *testing.T, _ string, prefetch int) (message.Publisher, func() message.Subscriber) {
		q := memqueue.NewQueue(memqueue.Config{Prefetch: prefetch})
		t.Cleanup(func() { _ = q.Close() })
		return q, func() message.Subscriber { return q }
	})
}

// Close ends the subscriptions (their channels close, nothing they
// started outlives it) and refuses what
// comes after it as an unreachable broker's, so the Dispatcher spends no
// attempt on it.
func TestClosedQueueFailsCleanly(t *testing.T) {
	q := memqueue.NewQueue(memqueue.Config{Prefetch: 4, NackDelay: time.Hour})
	msgs, err := q.Subscribe(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	// One acked, one nacked and waiting to come again, one held.
	for i := range 3 {
		if err := q.Publish("a", message.NewMessage(fmt.Sprint(i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	(<-msgs).Ack()
	(<-msgs).Nack()
	<-msgs
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	queuetest.NoGoroutinesIn(t, "github.com/oncehq/once/adapters/queue", "github.com/oncehq/once/adapters/queue/memqueue")
	if _, open := <-msgs; open {
		t.Fatal("a subscription delivered after Close")
	}
	if err := q.Publish("a", message.NewMessage("1", nil)); !errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Errorf("Publish after Close = %v, want ports.ErrBrokerUnreachable", err)
	}
	if _, err := q.Subscribe(context.Background(), "a"); !errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Errorf("Subscribe after Close = %v, want ports.ErrBrokerUnreachable", err)
	}
	if err := q.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
