package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/ports"
)

// broker makes the publishers of one run, built as the app builds them
// (app/queue.go), under a topic prefix of the run's own, and removes what
// the run left on the broker.
type broker struct {
	kind   string
	prefix string
	cfg    Brokers
	log    *slog.Logger
}

func newBroker(kind, prefix string, cfg Brokers, log *slog.Logger) *broker {
	return &broker{kind: kind, prefix: prefix, cfg: cfg, log: log}
}

// topics are the broker topics (Redis streams; AMQP exchanges and queues)
// the run publishes to.
func (b *broker) topics() []string { return []string{queue.Topic(b.prefix, EventType)} }

// publisher is a Dispatcher instance's publisher and its connection.
type publisher interface {
	ports.Publisher
	io.Closer
}

// newPublisher returns one Dispatcher instance's publisher, with its own
// broker connection as a separate process would have. Close closes it.
func (b *broker) newPublisher() (publisher, error) {
	var pub message.Publisher
	var err error
	switch b.kind {
	case PublisherBullMQ:
		// once's default job options; the jobs go to one BullMQ queue named
		// like the event type, under a key prefix of the run's own. No
		// Node.js worker takes them.
		ac := app.DefaultConfig()
		ac.RedisURL, ac.BullMQPrefix = b.cfg.RedisURL, b.bullmqPrefix()
		bc, err := ac.BullMQConfig.PublisherConfig(ac.RedisURL)
		if err != nil {
			return nil, err
		}
		return bullmq.New(bc)
	case PublisherMemory:
		// No subscriber: the persistent GoChannel just keeps the messages.
		pub, _ = memqueue.New(memqueue.Config{})
	case PublisherRedis:
		pub, err = redisstream.NewPublisher(redisstream.Config{URL: b.cfg.RedisURL}, b.log)
	case PublisherAMQP:
		pub, err = amqp.NewPublisher(amqp.Config{URL: b.cfg.AMQPURL, DialTimeout: 5 * time.Second}, b.log)
	default:
		err = fmt.Errorf("unknown publisher %q", b.kind)
	}
	if err != nil {
		return nil, err
	}
	return queue.NewPublisher(pub, b.prefix), nil
}

// bullmqPrefix is the run's BullMQ key prefix: its topic prefix without
// the trailing dot.
func (b *broker) bullmqPrefix() string { return strings.TrimSuffix(b.prefix, ".") }

// cleanup deletes the run's Redis streams or BullMQ keys, or AMQP queues
// and exchanges. What does not exist is not an error.
func (b *broker) cleanup(ctx context.Context) error {
	switch b.kind {
	case PublisherRedis:
		return b.cleanupRedis(ctx, b.prefix+"*")
	case PublisherBullMQ:
		return b.cleanupRedis(ctx, b.bullmqPrefix()+":*")
	case PublisherAMQP:
		return b.cleanupAMQP()
	}
	return nil
}

func (b *broker) cleanupRedis(ctx context.Context, pattern string) error {
	opts, err := redis.ParseURL(b.cfg.RedisURL)
	if err != nil {
		return errors.New("invalid redis URL")
	}
	client := redis.NewClient(opts)
	defer client.Close()
	// Every key under the prefix, not just the known topics: nothing of the
	// run stays behind.
	var keys []string
	iter := client.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("redis: scan %s: %w", pattern, err)
	}
	if len(keys) == 0 {
		return nil
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := client.Del(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("redis: delete %d key(s) matching %s: %w", len(keys), pattern, err)
		}
		keys = keys[n:]
	}
	return nil
}

func (b *broker) cleanupAMQP() error {
	conn, err := amqp091.DialConfig(b.cfg.AMQPURL, amqp091.Config{Dial: amqp091.DefaultDial(5 * time.Second)})
	if err != nil {
		return fmt.Errorf("amqp: connect for cleanup: %w", err)
	}
	defer conn.Close()
	var errs []error
	for _, topic := range b.topics() {
		errs = append(errs, amqp.DeleteTopology(conn, topic))
	}
	return errors.Join(errs...)
}
