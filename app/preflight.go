package app

import (
	"context"
	"time"

	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/adapters/queue/redisstream"
)

// brokerCheckTimeout bounds the start-up check of the broker.
const brokerCheckTimeout = 10 * time.Second

// CheckBroker is a start-up check for the commands that run a Dispatcher or
// workers on Redis (Streams or BullMQ) or RabbitMQ: the broker must answer
// now, and be what the configuration says (a Redis Cluster node is not
// reached through a single-node URL, RabbitMQ takes the credentials), or
// start-up fails with one line naming it, its address (never the
// credentials) and what to change. At run time a broker outage only delays
// delivery; at start-up a broker that does not answer is far more often a
// wrong address or a forgotten service, better reported than waited out.
// /readyz runs the same check.
func CheckBroker(ctx context.Context, process ProcessConfig, cfg QueueConfig) error {
	if !process.Dispatcher && !process.Worker {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, brokerCheckTimeout)
	defer cancel()
	switch cfg.Queue {
	case QueueRedis, QueueBullMQ:
		return redisstream.Ping(ctx, redisstream.Config{URL: cfg.RedisURL})
	case QueueAMQP:
		return amqp.Ping(amqpConfig(cfg))
	}
	return nil
}
