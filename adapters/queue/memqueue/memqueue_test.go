package memqueue_test

import (
	"testing"

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
