package amqp

import (
	"context"
	"sync"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"

	"github.com/oncehq/once/testsupport/queuetest"
)

// The subscriber keeps watermill's Pub/Sub contract (the parts that do not
// restart the broker or need consumer groups): with prefetch 1 it is the
// one-at-a-time, in-order subscriber watermill-amqp's was. On classic
// queues: the suite declares and deletes many queues in quick succession,
// and doing so with quorum queues that dead-letter at-least-once made
// RabbitMQ 4's dead-letter supervisor (rabbit_fifo_dlx_sup) give up, which
// broke every such queue on the shared broker until it was restarted.
func TestWatermillPubSubContract(t *testing.T) {
	// In order with one subscriber only: subscribers compete for one
	// queue, and the suite merges what several of them received.
	features := tests.Features{GuaranteedOrder: true, GuaranteedOrderWithSingleSubscriber: true, Persistent: true, ForceShort: true}
	for name, run := range map[string]func(*testing.T, tests.TestContext, tests.PubSubConstructor){
		"PublishSubscribe":            tests.TestPublishSubscribe,
		"ConcurrentSubscribe":         tests.TestConcurrentSubscribe,
		"ResendOnError":               tests.TestResendOnError,
		"NoAck":                       tests.TestNoAck,
		"ContinueAfterSubscribeClose": tests.TestContinueAfterSubscribeClose,
		"ConcurrentClose":             tests.TestConcurrentClose,
		"ContinueAfterErrors":         tests.TestContinueAfterErrors,
		"PublishSubscribeInOrder":     tests.TestPublishSubscribeInOrder,
		"MessageCtx":                  tests.TestMessageCtx,
		"SubscribeCtx":                tests.TestSubscribeCtx,
	} {
		t.Run(name, func(t *testing.T) {
			run(t, tests.TestContext{TestID: tests.NewTestID(), Features: features}, watermillPubSub)
		})
	}
}

// watermillPubSub builds the pair the suite runs on, deleting the topics
// it used when the test ends.
func watermillPubSub(t *testing.T) (message.Publisher, message.Subscriber) {
	uri := amqpURL(t)
	cfg := Config{URL: uri, QueueType: QueueClassic}
	pub, err := NewPublisher(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := NewSubscriber(cfg, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	seen := &topicsSeen{}
	t.Cleanup(func() {
		_ = sub.Close()
		_ = pub.Close()
		cleanupTopicsNow(t, uri, seen.list()...)
	})
	return pub, &recordingSubscriber{Subscriber: sub, seen: seen}
}

// recordingSubscriber remembers the topics subscribed to, for cleanup
// (the suite publishes only to topics it subscribes to).
type recordingSubscriber struct {
	message.Subscriber
	seen *topicsSeen
}

func (s *recordingSubscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.seen.add(topic)
	return s.Subscriber.Subscribe(ctx, topic)
}

type topicsSeen struct {
	mu     sync.Mutex
	topics map[string]bool
}

func (s *topicsSeen) add(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.topics == nil {
		s.topics = map[string]bool{}
	}
	s.topics[topic] = true
}

func (s *topicsSeen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for topic := range s.topics {
		out = append(out, topic)
	}
	return out
}
