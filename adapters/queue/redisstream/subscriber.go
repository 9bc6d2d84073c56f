package redisstream

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/redisconn"
)

// DefaultPrefetch is how many messages a subscription hands out
// unacknowledged when Config.Prefetch is zero.
const DefaultPrefetch = 64

// Subscriber reads streams through the workers' consumer group and hands
// out up to Prefetch messages of each subscription before any is
// acknowledged (watermill-redisstream reads one entry and waits for its
// ack, so a worker ran one job at a time per stream).
//
// A subscription reads new entries (XREADGROUP ">") as its window frees,
// takes over the entries other consumers left idle for MaxIdleTime
// (XAUTOCLAIM, every ClaimInterval), sends acks in batches (XACK), hands a
// nacked message out again after NackDelay, and keeps the entries it holds
// from looking idle (see refresh). When it ends, the entries it holds and
// were not acked stay pending in the group: another consumer, or this one
// started again, takes them over. Every command names the one stream, so
// a subscription runs on a Cluster as on a single node.
type Subscriber struct {
	client redis.UniversalClient
	cfg    Config
	log    *slog.Logger
	subs   queue.Subscriptions
}

// NewSubscriber returns a consumer-group subscriber with its own Redis
// client, closed by Close.
func NewSubscriber(cfg Config, logger *slog.Logger) (message.Subscriber, error) {
	client, err := cfg.client()
	if err != nil {
		return nil, err
	}
	return &Subscriber{client: client, cfg: cfg.subscriberDefaults(), log: logger}, nil
}

// subscriberDefaults fills the subscriber's zero fields.
func (c Config) subscriberDefaults() Config {
	if c.ConsumerGroup == "" {
		c.ConsumerGroup = DefaultConsumerGroup
	}
	if c.Consumer == "" {
		c.Consumer = consumerName()
	}
	if c.BlockTime <= 0 {
		// Zero would block forever (BLOCK 0).
		c.BlockTime = 100 * time.Millisecond
	}
	if c.ClaimInterval <= 0 {
		c.ClaimInterval = 5 * time.Second
	}
	if c.MaxIdleTime <= 0 {
		c.MaxIdleTime = 60 * time.Second
	}
	if c.Prefetch <= 0 {
		c.Prefetch = DefaultPrefetch
	}
	if c.NackDelay <= 0 {
		c.NackDelay = 100 * time.Millisecond
	}
	return c
}

// Subscribe creates the consumer group of topic if it is missing (at the
// stream's start, so what was published before is delivered) and starts
// a subscription that runs until ctx ends or the subscriber closes.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	if s.subs.Closed() {
		return nil, queue.ErrSubscriberClosed
	}
	err := s.client.XGroupCreateMkStream(ctx, topic, s.cfg.ConsumerGroup, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return nil, fmt.Errorf("redisstream: create group %s of %s: %w", s.cfg.ConsumerGroup, topic, redisconn.Classify(err))
	}
	sub := newSubscription(s.client, topic, s.cfg, s.log.With("stream", topic))
	if err := s.subs.Start(ctx, sub.out, sub.run); err != nil {
		return nil, err
	}
	return sub.out, nil
}

// Close ends every subscription, waits until each has sent its acks and
// closed its channel, then closes the client.
func (s *Subscriber) Close() error {
	if !s.subs.Close() {
		return nil
	}
	return s.client.Close()
}
