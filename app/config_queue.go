package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/adapters/queue/redisconn"
)

// QueueConfig selects the broker and says how to reach it.
type QueueConfig struct {
	// Queue selects the broker: memory (in-process, the embedded default),
	// redis (Redis Streams), amqp (RabbitMQ) or bullmq (BullMQ jobs in
	// Redis, for Node.js workers).
	Queue string `env:"ONCE_QUEUE"`
	// AcceptJobLoss lets `once serve` run on PostgreSQL with the memory
	// queue, which loses the jobs it holds when the process dies (see
	// JobLoss).
	AcceptJobLoss bool `env:"ONCE_ACCEPT_JOB_LOSS"`
	// RedisURL names a single Redis, a Sentinel-managed primary
	// (redis+sentinel://) or a Redis Cluster (redis+cluster://, or
	// redis://host:port?addr=host:port&...); see docs/brokers.md.
	RedisURL    string `env:"ONCE_REDIS_URL"`
	AMQPURL     string `env:"ONCE_AMQP_URL"`
	QueuePrefix string `env:"ONCE_QUEUE_PREFIX"`
	// RabbitMQ's queues: quorum (replicated) or classic, as the queues of
	// an existing deployment were declared; a quorum queue's delivery
	// limit before a message goes to its dead-letter queue (negative:
	// none).
	AMQPQueueType     string `env:"ONCE_AMQP_QUEUE_TYPE"`
	AMQPDeliveryLimit int    `env:"ONCE_AMQP_DELIVERY_LIMIT"`
	// How long a Redis message stays pending with a dead consumer before
	// another claims it; how often Redis streams are trimmed.
	RedisClaimIdle    time.Duration `env:"ONCE_REDIS_CLAIM_IDLE"`
	RedisTrimInterval time.Duration `env:"ONCE_REDIS_TRIM_INTERVAL"`
}

func defaultQueueConfig() QueueConfig {
	return QueueConfig{
		Queue: QueueMemory, RedisURL: "redis://127.0.0.1:6379/0", AMQPURL: "amqp://guest:guest@127.0.0.1:5672/", QueuePrefix: "once.",
		AMQPQueueType: amqp.QueueQuorum, AMQPDeliveryLimit: amqp.DefaultDeliveryLimit,
		RedisClaimIdle: time.Minute, RedisTrimInterval: time.Minute,
	}
}

// Queues.
const (
	QueueMemory = "memory"
	QueueRedis  = "redis"
	QueueAMQP   = "amqp"
	QueueBullMQ = "bullmq"
)

// Validate checks the chosen queue and its broker's settings; with
// ONCE_QUEUE=bullmq, jobs (BullMQ's) too, whose deduplication must
// outlast dispatchLease.
func (c QueueConfig) Validate(jobs BullMQConfig, dispatchLease time.Duration) error {
	return errors.Join(
		c.validateQueue(jobs, dispatchLease),
		c.validateBroker(jobs),
		invalidIf(c.RedisClaimIdle < time.Second, "ONCE_REDIS_CLAIM_IDLE must be at least 1s"),
		invalidIf(c.RedisTrimInterval < time.Second, "ONCE_REDIS_TRIM_INTERVAL must be at least 1s"),
	)
}

// validateQueue checks that the queue is one we have, and with bullmq
// BullMQ's jobs.
func (c QueueConfig) validateQueue(jobs BullMQConfig, dispatchLease time.Duration) error {
	switch c.Queue {
	case QueueMemory, QueueRedis, QueueAMQP:
		return nil
	case QueueBullMQ:
		return jobs.Validate(dispatchLease)
	default:
		return fmt.Errorf("ONCE_QUEUE=%q must be memory, redis, amqp or bullmq", c.Queue)
	}
}

// validateBroker checks the broker settings of the chosen queue: the
// Redis URL names a topology, BullMQ's keys fit a Redis Cluster, the
// RabbitMQ queue type is one.
func (c QueueConfig) validateBroker(jobs BullMQConfig) error {
	switch c.Queue {
	case QueueRedis, QueueBullMQ:
		topology, err := redisconn.TopologyOf(c.RedisURL)
		if err != nil {
			return fmt.Errorf("ONCE_REDIS_URL: %w (see docs/brokers.md for the single node, Sentinel and Cluster forms)", err)
		}
		if routes, err := jobs.routes(); c.Queue == QueueBullMQ && err == nil && topology == redisconn.Cluster && !bullmq.HashTagged(jobs.BullMQPrefix, routes) {
			return fmt.Errorf("ONCE_BULLMQ_PREFIX=%q / ONCE_BULLMQ_QUEUES: %w", jobs.BullMQPrefix, bullmq.ErrNoHashTag)
		}
	case QueueAMQP:
		return errors.Join(
			invalidIf(c.AMQPQueueType != amqp.QueueQuorum && c.AMQPQueueType != amqp.QueueClassic,
				"ONCE_AMQP_QUEUE_TYPE=%q must be %s or %s (the type the queues were declared with)", c.AMQPQueueType, amqp.QueueQuorum, amqp.QueueClassic),
			invalidIf(c.AMQPDeliveryLimit == 0 || c.AMQPDeliveryLimit > 1000, "ONCE_AMQP_DELIVERY_LIMIT=%d must be between 1 and 1000, or negative for none", c.AMQPDeliveryLimit),
		)
	}
	return nil
}

func (QueueConfig) settings() settingGroup { return queueSettings }

var queueSettings = settingGroup{
	title: "Queue and brokers",
	vars: map[string]setting{
		"ONCE_QUEUE": {
			help: "the broker: memory (in-process), redis (Redis Streams), amqp (RabbitMQ) or bullmq (jobs for Node.js workers; once's own webhook deliveries on Redis Streams for `once work`)",
			doc:  "`memory`, `redis`, `amqp` or `bullmq`. `bullmq` writes the task jobs for Node.js workers; once's own jobs (webhook deliveries) go to Redis Streams on the same Redis, for `once work` ([delivery.md](delivery.md#bullmq-nodejs-workers)). `memory` is the embedded store's queue: with `DATABASE_URL`, `once serve` refuses it (unless `ONCE_ACCEPT_JOB_LOSS=true`) when it runs a Dispatcher or the relay, because the jobs the process holds are lost when it dies ([deploy.md](deploy.md#one-box))",
		},
		"ONCE_ACCEPT_JOB_LOSS": {
			help: "true: `once serve` runs on PostgreSQL with ONCE_QUEUE=memory although a crash loses the jobs the process holds (it refuses to start otherwise)",
			doc:  "`true`: `once serve` runs on PostgreSQL with `ONCE_QUEUE=memory` anyway. A job in the process's channel when it dies never runs and its operation stays `running` (its event is already marked dispatched); `once config` ends with a warning. For a demo on PostgreSQL, never for production",
		},
		"ONCE_REDIS_URL": {
			help: "Redis of ONCE_QUEUE=redis or bullmq: redis:// (one node), redis+sentinel:// or redis+cluster:// (docs/brokers.md)",
			doc:  "Redis for `ONCE_QUEUE=redis` and `bullmq`, and the rate limiter's (`ONCE_RATE_LIMIT_STORE=redis`, the default with PostgreSQL)",
		},
		"ONCE_AMQP_URL": {
			help: "RabbitMQ of ONCE_QUEUE=amqp",
			doc:  "RabbitMQ for `ONCE_QUEUE=amqp`",
		},
		"ONCE_QUEUE_PREFIX": {
			help: "prefix of the stream, exchange and queue names",
			doc:  "prefix of stream / exchange / queue names (topic = prefix + event type)",
		},
		"ONCE_AMQP_QUEUE_TYPE": {
			help: "quorum (replicated) or classic, as the queues of an existing deployment were declared",
		},
		"ONCE_AMQP_DELIVERY_LIMIT": {
			help: "deliveries of a message to a quorum queue before its dead-letter queue takes it (negative: none)",
		},
		"ONCE_REDIS_CLAIM_IDLE": {
			help: "how long a Redis message stays pending with a dead consumer before another claims it",
			doc:  "how long a message stays pending with a dead consumer before another claims it; a live worker refreshes the messages it holds every third of it, however long a job runs or waits in its buffer, so it only bounds how late a dead worker's jobs run",
		},
		"ONCE_REDIS_TRIM_INTERVAL": {
			help: "how often the Redis streams are trimmed",
			doc:  "how often workers trim their Redis streams to what a consumer group still needs",
		},
	},
}
