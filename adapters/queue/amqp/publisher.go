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
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/ports"
)

// closeTimeout bounds the polite close of the connection (connection.close
// and its answer) when the publisher is closed.
const closeTimeout = 2 * time.Second

// Publisher publishes to RabbitMQ with publisher confirms, on a connection
// and a confirm-mode channel of its own, written on amqp091 directly:
// watermill-amqp's publisher waits for each confirm in turn and without an
// end, so a broker that stops answering held the call (and, once the caller
// gave up, a goroutine) until the heartbeat noticed, after 30 s.
//
// Publish sends every message of the call, then waits for their confirms
// together, and is bounded by the messages' context: when it ends first,
// the connection is cut, which ends every call on it at once, and the next
// Publish connects again. Nothing of a timed-out publish is left running.
// Publishes take turns to send, on one connection and one channel, but not
// to await their confirms: the broker confirms persistent messages once
// they are on disk, and the next call's batch is sent while the last one's
// confirms are still out, so batches in flight share the broker's disk
// writes instead of each waiting for its own. (A channel per call did
// worse on a 2-core machine: more broker processes for the same writes.)
//
// Errors wrap ports.ErrBrokerUnreachable when the connection could not be
// made or died (the broker is down, restarting, or cut us off), and
// ports.ErrBrokerMisconfigured when the broker refused once's setup: a
// queue that exists with other arguments, refused credentials or
// permissions (see misconfigured). A nack, or a channel the broker closed
// over a message, is an error of the messages.
type Publisher struct {
	cfg  Config
	log  *slog.Logger
	turn chan struct{} // held by the Publish sending

	// declared holds the topics whose exchange and queue exist, on conn;
	// only the Publish holding the turn uses it.
	declared map[string]bool

	tracer trace.Tracer // nil without Config.Tracing

	mu     sync.Mutex // guards the fields below; Close takes it to cut a Publish short
	conn   *amqp091.Connection
	ch     *amqp091.Channel
	closed bool
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher connects and returns a publisher owning its connection.
// An unreachable broker is a domain.CodeUnavailable error here, within
// DialTimeout.
func NewPublisher(cfg Config, logger *slog.Logger) (message.Publisher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Publisher{cfg: cfg, log: logger, turn: make(chan struct{}, 1)}
	if cfg.Tracing != nil {
		p.tracer = cfg.Tracing.Tracer(instrumentation)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
	defer cancel()
	conn, err := dial(ctx, p.cfg)
	if err != nil {
		return nil, connectError("publisher", err)
	}
	p.conn, p.declared = conn, map[string]bool{}
	return p, nil
}

// Publish implements message.Publisher. It returns once the broker
// confirmed every message, or with the first failure, or when the context
// of the first message ends. With Config.Tracing the call is a span.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if p.tracer == nil {
		return p.publish(msgs[0].Context(), topic, msgs)
	}
	ctx, end := p.startPublish(msgs[0].Context(), topic, msgs)
	err := p.publish(ctx, topic, msgs)
	end(err)
	return err
}

func (p *Publisher) publish(ctx context.Context, topic string, msgs []*message.Message) error {
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	conn, ch, err := p.session(ctx)
	if err != nil {
		<-p.turn
		return err
	}
	// A broker that stops answering must not hold this call past its
	// context: cutting the connection makes every call on it return.
	cut := context.AfterFunc(ctx, func() { _ = conn.CloseDeadline(time.Now()) })
	confirms, err := p.send(conn, ch, topic, msgs)
	<-p.turn // the next call sends while this one awaits its confirms
	if err == nil {
		err = p.await(ctx, conn, ch, msgs, confirms)
	}
	if !cut() {
		p.drop(conn) // cut, or being cut: start afresh next time
	} else if err != nil {
		p.forget(conn, ch)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("amqp: publish to %s: %w (%w)", topic, context.Cause(ctx), err)
	}
	return err
}

// session returns the connection and the confirm-mode channel, connecting
// and opening them first if needed.
func (p *Publisher) session(ctx context.Context) (*amqp091.Connection, *amqp091.Channel, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, fmt.Errorf("amqp: publisher closed: %w", ports.ErrBrokerUnreachable)
	}
	if p.conn == nil || p.conn.IsClosed() {
		conn, err := dial(ctx, p.cfg)
		if err != nil {
			return nil, nil, dialFailure(err)
		}
		p.conn, p.ch, p.declared = conn, nil, map[string]bool{}
	}
	if p.ch == nil || p.ch.IsClosed() {
		conn := p.conn
		cut := context.AfterFunc(ctx, func() { _ = conn.CloseDeadline(time.Now()) })
		ch, err := p.openChannel(conn)
		if !cut() || err != nil {
			// A connection that cannot open a channel is of no use.
			p.dropLocked(conn)
			if err == nil {
				_ = ch.Close()
				err = context.Cause(ctx)
			}
			return nil, nil, fmt.Errorf("amqp: open channel: %w: %w", ports.ErrBrokerUnreachable, err)
		}
		p.ch = ch
	}
	return p.conn, p.ch, nil
}

func (p *Publisher) openChannel(conn *amqp091.Connection) (*amqp091.Channel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, err
	}
	return ch, nil
}

// send declares the topic's exchange and queue once per connection and
// sends every message; the caller holds the turn.
func (p *Publisher) send(conn *amqp091.Connection, ch *amqp091.Channel, topic string, msgs []*message.Message) ([]*amqp091.DeferredConfirmation, error) {
	if !p.declared[topic] {
		if err := p.cfg.topology().declare(ch, topic, p.cfg.watermillConfig()); err != nil {
			return nil, brokerFailure(conn, err)
		}
		p.declared[topic] = true
	}
	confirms := make([]*amqp091.DeferredConfirmation, len(msgs))
	for i, m := range msgs {
		pub, err := Marshaler{}.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("amqp: marshal message %s: %w", m.UUID, err)
		}
		confirms[i], err = ch.PublishWithDeferredConfirm(topic, "", false, false, pub)
		if err != nil {
			return nil, brokerFailure(conn, fmt.Errorf("amqp: publish message %s: %w", m.UUID, err))
		}
	}
	return confirms, nil
}

// await waits for the confirms of the messages send sent.
func (p *Publisher) await(ctx context.Context, conn *amqp091.Connection, ch *amqp091.Channel, msgs []*message.Message, confirms []*amqp091.DeferredConfirmation) error {
	for i, c := range confirms {
		acked, err := c.WaitContext(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("amqp: waiting for the confirm of message %s: %w", msgs[i].UUID, err)
		case acked:
			continue
		case ch.IsClosed():
			return brokerFailure(conn, fmt.Errorf("amqp: channel closed before the confirm of message %s", msgs[i].UUID))
		default:
			return fmt.Errorf("amqp: the broker refused message %s (nack)", msgs[i].UUID)
		}
	}
	return nil
}

// forget drops, after a failed publish, what the failure closed: the
// connection, or only the channel (the broker closes a channel over an
// error of a message or a declaration), so the next Publish opens it again.
func (p *Publisher) forget(conn *amqp091.Connection, ch *amqp091.Channel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if conn.IsClosed() {
		p.dropLocked(conn)
	} else if ch.IsClosed() && p.ch == ch {
		p.ch = nil
	}
}

// drop closes conn at once, if not yet, and forgets it.
func (p *Publisher) drop(conn *amqp091.Connection) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(conn)
}

func (p *Publisher) dropLocked(conn *amqp091.Connection) {
	_ = conn.CloseDeadline(time.Now()) // no goodbye: the broker did not answer in time
	if p.conn == conn {
		p.conn, p.ch = nil, nil
	}
}

// Close closes the connection, cutting short a Publish in progress.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.conn == nil || p.conn.IsClosed() {
		return nil
	}
	if err := p.conn.CloseDeadline(time.Now().Add(closeTimeout)); err != nil && !errors.Is(err, amqp091.ErrClosed) {
		return fmt.Errorf("amqp: close publisher: %w", err)
	}
	return nil
}
