// Package memqueue is the in-process queue, for the embedded default (one
// binary, no broker) and for unit tests.
//
// It is a queue with competing consumers, as the brokers are: each topic
// is a FIFO, each message goes to one subscription of its topic, and each
// subscription holds up to Prefetch messages unacknowledged at once. An
// acked message is dropped for good, so memory holds only what waits or
// runs; a nacked one, and those a subscription held when it ended, go back
// to the front of the FIFO for the next subscription with room. Messages
// published before anyone subscribed wait for a subscription. A process
// restart loses them all: the embedded mode trades durability for having
// no broker; the outbox still holds the events.
package memqueue

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/adapters/queue"
)

// DefaultPrefetch is how many messages a subscription hands out
// unacknowledged when Config.Prefetch is zero.
const DefaultPrefetch = 64

// Config tunes the in-process queue.
type Config struct {
	// Prefetch is how many messages each subscription hands out before any
	// is acknowledged (default DefaultPrefetch).
	Prefetch int
	// NackDelay is how long a nacked message waits before it is back in
	// its FIFO (default 100ms), so a handler that nacks at once does not
	// spin.
	NackDelay time.Duration
}

// Queue is the publisher and the subscriber of the in-process queue.
type Queue struct {
	cfg Config

	mu     sync.Mutex // guards every topic and subscription too
	topics map[string]*topic
	subs   queue.Subscriptions
}

// topic is one FIFO and the signal its subscriptions wait on.
type topic struct {
	ready list.List // of *message.Message, as published
	// changed is closed, and replaced, when ready grows or a subscription's
	// window frees.
	changed chan struct{}
}

func (t *topic) signal() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// New returns the publisher and subscriber of one queue: they are the same
// object, so closing either closes both.
func New(cfg Config) (message.Publisher, message.Subscriber) {
	q := NewQueue(cfg)
	return q, q
}

// NewQueue returns an empty queue.
func NewQueue(cfg Config) *Queue {
	if cfg.Prefetch <= 0 {
		cfg.Prefetch = DefaultPrefetch
	}
	if cfg.NackDelay <= 0 {
		cfg.NackDelay = 100 * time.Millisecond
	}
	return &Queue{cfg: cfg, topics: make(map[string]*topic)}
}

// topic returns the topic of name, made on first use; q.mu is held.
func (q *Queue) topic(name string) *topic {
	t := q.topics[name]
	if t == nil {
		t = &topic{changed: make(chan struct{})}
		q.topics[name] = t
	}
	return t
}

// Publish appends msgs to topic's FIFO, in order.
func (q *Queue) Publish(name string, msgs ...*message.Message) error {
	if q.subs.Closed() {
		return queue.ErrSubscriberClosed
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.topic(name)
	for _, m := range msgs {
		t.ready.PushBack(m.Copy())
	}
	t.signal()
	return nil
}

// Subscribe starts a subscription of topic that runs until ctx ends or the
// queue closes.
func (q *Queue) Subscribe(ctx context.Context, name string) (<-chan *message.Message, error) {
	q.mu.Lock()
	s := &subscription{q: q, t: q.topic(name), out: make(chan *message.Message)}
	q.mu.Unlock()
	if err := q.subs.Start(ctx, s.out, s.run); err != nil {
		return nil, err
	}
	return s.out, nil
}

// Close ends every subscription and waits until each closed its channel.
// The messages left are dropped with the queue.
func (q *Queue) Close() error {
	q.subs.Close()
	return nil
}
