package amqp

import (
	"context"
	"log/slog"
	"sync"
	"time"

	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/cenkalti/backoff/v5"
	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/domain"
)

// Reconnection backoff: from about reconnectFirst, doubling, up to about
// reconnectMax, each wait varied by ±50% so the workers of a broker that
// came back do not all return in the same instant.
const (
	reconnectFirst = 100 * time.Millisecond
	reconnectMax   = 5 * time.Second
)

// consumer is one subscription: it consumes the topic's queue on a
// session, hands every delivery out at once and settles each one when its
// message is acked or nacked, and opens a new session when one is lost.
type consumer struct {
	sub   *Subscriber
	topic string
	log   *slog.Logger
	out   chan *message.Message

	// ctx is the subscription's: it ends with the caller's context or
	// with Close, and every message's context is made from it.
	ctx  context.Context
	stop context.CancelFunc
}

// session is one channel consuming the queue, and the messages it handed
// out that are not settled yet.
type session struct {
	ch         *amqp091.Channel
	tag        string // the consumer tag, for basic.cancel
	deliveries <-chan amqp091.Delivery
	lost       <-chan *amqp091.Error // closed once the channel is closed, by anyone
	unsettled  sync.WaitGroup
}

func newConsumer(s *Subscriber, ctx context.Context, topic string) *consumer {
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(s.closed, cancel)
	return &consumer{
		sub: s, topic: topic, log: s.log.With("topic", topic), out: make(chan *message.Message),
		ctx: ctx, stop: func() { unhook(); cancel() },
	}
}

// open opens a channel, declares the topology on it and consumes the
// queue with manual acknowledgements and the configured prefetch.
func (c *consumer) open() (*session, error) {
	conn, err := c.sub.connection(c.ctx)
	if err != nil {
		return nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, brokerFailure(conn, err)
	}
	sess, err := c.consume(ch)
	if err != nil {
		_ = ch.Close()
		return nil, brokerFailure(conn, err)
	}
	return sess, nil
}

func (c *consumer) consume(ch *amqp091.Channel) (*session, error) {
	cfg := c.sub.cfg
	if err := cfg.topology().declare(ch, c.topic, cfg.watermillConfig()); err != nil {
		return nil, err
	}
	if err := ch.Qos(cfg.Prefetch, 0, false); err != nil {
		return nil, err
	}
	sess := &session{ch: ch, tag: "once-" + uuid.NewString(), lost: ch.NotifyClose(make(chan *amqp091.Error, 1))}
	deliveries, err := ch.Consume(cfg.watermillConfig().Queue.GenerateName(c.topic), sess.tag, false, false, false, false, nil)
	if err != nil {
		return nil, err
	}
	sess.deliveries = deliveries
	return sess, nil
}

// run consumes until the subscription ends, on sess and then on the
// sessions that replace it when it is lost.
func (c *consumer) run(sess *session) {
	defer c.sub.running.Done()
	defer c.stop()
	for sess != nil {
		c.feed(sess)
		switch {
		case c.sub.closed.Err() != nil:
			// Close cut the connection: the unsettled go back to the queue.
			close(c.out)
			sess.unsettled.Wait()
			return
		case c.ctx.Err() != nil:
			c.finish(sess)
			return
		}
		c.log.Warn("amqp: consuming stopped, the channel or the connection was lost; consuming again")
		_ = sess.ch.Close() // already closed, or consuming no more
		sess.unsettled.Wait()
		sess = c.reopen()
	}
	close(c.out)
}

// feed hands sess's deliveries out until the channel is lost or the
// subscription ends.
func (c *consumer) feed(sess *session) {
	for {
		select {
		case d, ok := <-sess.deliveries:
			if !ok || !c.handOut(sess, d) {
				return
			}
		case <-sess.lost:
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// handOut sends d's message out and leaves its settling to a goroutine of
// its own, so the next delivery goes out without waiting for it.
func (c *consumer) handOut(sess *session, d amqp091.Delivery) bool {
	msg, _ := Marshaler{}.Unmarshal(d) // never fails
	if d.Redelivered {
		msg.Metadata.Set(wmamqp.MetadataRedeliveredKey, "true")
	}
	// The message's context ends once it is settled, as watermill's
	// subscribers do, or with the subscription.
	ctx, done := context.WithCancel(c.ctx)
	msg.SetContext(ctx)
	select {
	case c.out <- msg:
	case <-sess.lost:
		done()
		return false // the broker delivers it again
	case <-c.ctx.Done():
		done()
		c.settle(d.Nack(false, true), msg, "nack")
		return false
	}
	sess.unsettled.Add(1)
	go func() {
		defer sess.unsettled.Done()
		defer done()
		c.await(sess, msg, d)
	}()
	return true
}

// await settles d as msg's handler decides. Acks go out in any order,
// one delivery each (multiple=false), which AMQP allows.
func (c *consumer) await(sess *session, msg *message.Message, d amqp091.Delivery) {
	select {
	case <-msg.Acked():
		c.settle(d.Ack(false), msg, "ack")
	case <-msg.Nacked():
		c.settle(d.Nack(false, true), msg, "nack")
	case <-sess.lost:
		c.log.Debug("amqp: the channel was lost before the message was settled; the broker delivers it again", "message_uuid", msg.UUID)
	case <-c.sub.closed.Done():
	}
}

// settle logs a failed ack or nack, at Debug: amqp091 fails one only when
// the channel or its connection is lost (closed, or a write that failed and
// takes the connection down), and then the broker delivers the message
// again; nothing is lost and nobody has to act.
func (c *consumer) settle(err error, msg *message.Message, what string) {
	if err != nil {
		c.log.Debug("amqp: "+what+" dropped, the channel was lost; the broker delivers the message again", "message_uuid", msg.UUID, "error", err)
	}
}

// finish ends a subscription whose context ended: it stops consuming,
// gives back what arrived but was not handed out, closes the output, and
// closes the channel once every message handed out was settled (or the
// channel was lost, or the subscriber closed).
func (c *consumer) finish(sess *session) {
	// Without waiting for cancel-ok: a broker that stopped answering would
	// hold the subscription until the heartbeat noticed.
	if err := sess.ch.Cancel(sess.tag, true); err == nil {
		for d := range sess.deliveries { // closed once the buffered ones are out
			if err := d.Nack(false, true); err != nil {
				break // the channel is lost: the broker puts them back itself
			}
		}
	}
	close(c.out)
	sess.unsettled.Wait()
	_ = sess.ch.Close()
}

// reopen opens a new session, after a backoff between failed tries; nil
// once the subscription ended.
func (c *consumer) reopen() *session {
	wait := backoff.ExponentialBackOff{
		InitialInterval: reconnectFirst, MaxInterval: reconnectMax, Multiplier: 2, RandomizationFactor: 0.5,
	}
	for tries := 1; ; tries++ {
		sess, err := c.open()
		if err == nil {
			c.log.Info("amqp: consuming again", "tries", tries)
			return sess
		}
		if c.ctx.Err() != nil {
			return nil
		}
		next := wait.NextBackOff()
		level := slog.LevelDebug
		if tries == 1 {
			level = slog.LevelWarn // once per outage: the rest says the same
		}
		c.log.Log(c.ctx, level, "amqp: cannot consume yet, trying again", "error", domain.SanitizeError(err), "retry_in", next)
		timer := time.NewTimer(next)
		select {
		case <-timer.C:
		case <-c.ctx.Done():
			timer.Stop()
			return nil
		}
	}
}
