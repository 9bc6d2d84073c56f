package amqp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/ports"
)

// Subscriber consumes RabbitMQ queues on amqp091 directly, with manual
// acknowledgements and a prefetch of Config.Prefetch per subscription:
// each delivery is handed out as soon as it arrives, without waiting for
// the previous one's acknowledgement (watermill-amqp's subscriber hands
// out the next only then, so a worker ran one job at a time per topic).
// Messages are acknowledged in whatever order their handlers finish.
//
// The subscriptions share one connection, each on a channel of its own.
// When the connection or a channel is lost, each subscription consumes
// again once it can, with a bounded, jittered backoff, until its context
// ends or the subscriber is closed (consumer.go).
type Subscriber struct {
	cfg Config
	log *slog.Logger

	// closed ends with Close; every subscription's context ends with it.
	closed context.Context
	close  context.CancelFunc

	running sync.WaitGroup // the subscriptions' goroutines

	mu   sync.Mutex // guards conn; Subscribe takes it to join running
	conn *amqp091.Connection
}

var _ message.Subscriber = (*Subscriber)(nil)

// NewSubscriber connects and returns a subscriber owning its connection.
// An unreachable broker is a domain.CodeUnavailable error here, within
// DialTimeout.
func NewSubscriber(cfg Config, logger *slog.Logger) (message.Subscriber, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
	defer cancel()
	conn, err := dial(ctx, cfg)
	if err != nil {
		return nil, connectError("subscriber", err)
	}
	s := &Subscriber{cfg: cfg, log: logger.With("component", "amqp-subscriber"), conn: conn}
	s.closed, s.close = context.WithCancel(context.Background())
	return s, nil
}

// Subscribe declares topic's exchange, queue and binding (topology.go),
// starts consuming its queue and returns the messages, until ctx ends or
// the subscriber is closed; then the channel is closed. A first
// declaration or consume that fails is returned, wrapping
// ports.ErrBrokerMisconfigured when the broker refused once's setup (a
// *queue.MisconfiguredError for a queue declared with other arguments) or
// ports.ErrBrokerUnreachable when the broker could not be reached.
//
// Ack on a message acknowledges its delivery, Nack gives it back to the
// queue. Once ctx ended, the messages handed out can still be acked or
// nacked (their channel stays open for them); once the subscriber is
// closed, or the channel was lost, they are delivered again instead.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	c := newConsumer(s, ctx, topic)
	sess, err := c.open()
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("amqp: subscribe to %s: %w", topic, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Err() != nil {
		c.stop()
		_ = sess.ch.Close()
		return nil, fmt.Errorf("amqp: subscribe to %s: subscriber closed: %w", topic, ports.ErrBrokerUnreachable)
	}
	s.running.Add(1)
	go c.run(sess)
	return c.out, nil
}

// connection returns the subscriber's connection, connecting again first
// if it was lost.
func (s *Subscriber) connection(ctx context.Context) (*amqp091.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Err() != nil {
		return nil, fmt.Errorf("amqp: subscriber closed: %w", ports.ErrBrokerUnreachable)
	}
	if s.conn == nil || s.conn.IsClosed() {
		conn, err := dial(ctx, s.cfg)
		if err != nil {
			return nil, dialFailure(err)
		}
		s.conn = conn
	}
	return s.conn, nil
}

// Close ends every subscription and closes the connection. The connection
// goes first: closing it cancels every consumer and closes every channel
// at once, and RabbitMQ puts their unacknowledged deliveries back in their
// queues; a polite basic.cancel and channel.close per subscription would
// wait for answers a broker that stopped answering never gives. Close
// then waits for the subscriptions' goroutines to end.
func (s *Subscriber) Close() error {
	s.close() // no new connection from here on, and the subscriptions stop
	s.mu.Lock()
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	var err error
	if conn != nil && !conn.IsClosed() {
		if cerr := conn.CloseDeadline(time.Now().Add(closeTimeout)); cerr != nil && !errors.Is(cerr, amqp091.ErrClosed) {
			err = fmt.Errorf("amqp: close subscriber: %w", cerr)
		}
	}
	s.running.Wait()
	return err
}
