package app

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/queue/bullmq"
)

// BullMQConfig is ONCE_QUEUE=bullmq's: jobs in the Redis at ONCE_REDIS_URL
// for Node.js BullMQ workers. Queues is the event type -> queue mapping
// ("type=queue,...,*=queue"; by default a queue per event type, named
// like it), Priorities "type=1..2097151,...". Attempts and Backoff
// (exponential) are the Node.js side's retries; the Keep settings bound
// the finished jobs kept in Redis (removeOnComplete / removeOnFail).
type BullMQConfig struct {
	BullMQPrefix             string        `env:"ONCE_BULLMQ_PREFIX"`
	BullMQQueues             string        `env:"ONCE_BULLMQ_QUEUES"`
	BullMQPriorities         string        `env:"ONCE_BULLMQ_PRIORITIES"`
	BullMQAttempts           int           `env:"ONCE_BULLMQ_ATTEMPTS"`
	BullMQBackoff            time.Duration `env:"ONCE_BULLMQ_BACKOFF"`
	BullMQKeepCompletedAge   time.Duration `env:"ONCE_BULLMQ_KEEP_COMPLETED_AGE"`
	BullMQKeepCompletedCount int           `env:"ONCE_BULLMQ_KEEP_COMPLETED_COUNT"`
	BullMQKeepFailedAge      time.Duration `env:"ONCE_BULLMQ_KEEP_FAILED_AGE"`
	BullMQKeepFailedCount    int           `env:"ONCE_BULLMQ_KEEP_FAILED_COUNT"`
}

func defaultBullMQConfig() BullMQConfig {
	return BullMQConfig{
		BullMQPrefix: bullmq.DefaultPrefix, BullMQAttempts: 6, BullMQBackoff: time.Second,
		BullMQKeepCompletedAge: time.Hour, BullMQKeepCompletedCount: 10000,
		BullMQKeepFailedAge: 7 * 24 * time.Hour, BullMQKeepFailedCount: 10000,
	}
}

// Bounds of the BullMQ settings: retries the Node.js side can live with,
// and finished jobs kept long enough to deduplicate a republished event
// but never without limit.
const (
	maxBullMQAttempts = 100
	maxBullMQBackoff  = 24 * time.Hour
	minBullMQKeep     = 100
	maxBullMQKeep     = 1_000_000
	maxBullMQKeepAge  = 90 * 24 * time.Hour
)

func (c BullMQConfig) routes() (bullmq.Routes, error) {
	return bullmq.ParseRoutes(c.BullMQQueues, c.BullMQPriorities)
}

// PublisherConfig is the BullMQ publisher's configuration, for the Redis
// at redisURL.
func (c BullMQConfig) PublisherConfig(redisURL string) (bullmq.Config, error) {
	routes, err := c.routes()
	if err != nil {
		return bullmq.Config{}, err
	}
	return bullmq.Config{
		URL:    redisURL,
		Prefix: c.BullMQPrefix,
		Routes: routes,
		Job: bullmq.JobOptions{
			Attempts:      c.BullMQAttempts,
			Backoff:       c.BullMQBackoff,
			KeepCompleted: bullmq.Retention{Age: c.BullMQKeepCompletedAge, Count: c.BullMQKeepCompletedCount},
			KeepFailed:    bullmq.Retention{Age: c.BullMQKeepFailedAge, Count: c.BullMQKeepFailedCount},
		},
	}, nil
}

// Validate checks the jobs' settings. A Dispatcher that died between
// publishing and marking is replaced after its lease (dispatchLease); the
// republished event is deduplicated only while its first job is still
// kept.
func (c BullMQConfig) Validate(dispatchLease time.Duration) error {
	routes, routesErr := c.routes()
	own := slices.IndexFunc(ownEventTypes, routes.Names)
	const keptJobs = "%s must be between %d and %d: finished jobs stay in Redis up to that many per queue"
	return errors.Join(
		invalidIf(c.BullMQPrefix == "" || strings.ContainsAny(c.BullMQPrefix, " \t\r\n"), "ONCE_BULLMQ_PREFIX=%q must be a BullMQ key prefix (not empty, no white space)", c.BullMQPrefix),
		invalidIf(routesErr != nil, "ONCE_BULLMQ_QUEUES / ONCE_BULLMQ_PRIORITIES: %v", routesErr),
		// A mapping of once's own jobs would be silently ignored.
		invalidIf(routesErr == nil && own >= 0, "ONCE_BULLMQ_QUEUES / ONCE_BULLMQ_PRIORITIES name %s: once's own jobs go to Redis Streams for `once work`, never to BullMQ", ownEventTypes[max(own, 0)]),
		invalidIf(outside(c.BullMQAttempts, 1, maxBullMQAttempts), "ONCE_BULLMQ_ATTEMPTS must be between 1 and %d", maxBullMQAttempts),
		invalidIf(outside(c.BullMQBackoff, 0, maxBullMQBackoff), "ONCE_BULLMQ_BACKOFF must be between 0 and %s", maxBullMQBackoff),
		invalidIf(outside(c.BullMQKeepCompletedAge, 2*dispatchLease, maxBullMQKeepAge),
			"ONCE_BULLMQ_KEEP_COMPLETED_AGE must be between twice ONCE_DISPATCH_LEASE (%s) and %s, so a republished event finds its job", 2*dispatchLease, maxBullMQKeepAge),
		invalidIf(outside(c.BullMQKeepFailedAge, time.Minute, maxBullMQKeepAge), "ONCE_BULLMQ_KEEP_FAILED_AGE must be between 1m and %s", maxBullMQKeepAge),
		invalidIf(outside(c.BullMQKeepCompletedCount, minBullMQKeep, maxBullMQKeep), keptJobs, "ONCE_BULLMQ_KEEP_COMPLETED_COUNT", minBullMQKeep, maxBullMQKeep),
		invalidIf(outside(c.BullMQKeepFailedCount, minBullMQKeep, maxBullMQKeep), keptJobs, "ONCE_BULLMQ_KEEP_FAILED_COUNT", minBullMQKeep, maxBullMQKeep),
	)
}

func (BullMQConfig) settings() settingGroup { return bullmqSettings }

var bullmqSettings = settingGroup{
	title: "BullMQ",
	vars: map[string]setting{
		"ONCE_BULLMQ_PREFIX": {
			help: "key prefix of the BullMQ queues",
			doc:  "BullMQ key prefix (the `prefix` option of the Node.js `Queue` and `Worker`)",
		},
		"ONCE_BULLMQ_QUEUES": {
			help: "queue of each event type, type=queue,...,*=queue; empty: a queue per event type, named like it",
			doc:  "event type → queue, `type=queue,…`, `*=queue` for every other type; empty: a queue per event type, named like it. Queue names hold no `:`. once's own `webhook.deliver` is not BullMQ's: naming it here or in the priorities is refused",
		},
		"ONCE_BULLMQ_PRIORITIES": {
			help: "priority of each event type, type=1..2097151,...",
			doc:  "BullMQ priority per event type, `type=1..2097151,…` (1 first); unset: no priority (plain FIFO)",
		},
		"ONCE_BULLMQ_ATTEMPTS": {
			help: "attempts of a job by the Node.js workers",
			doc:  "job `attempts`: tries of the Node.js worker, 1–100",
		},
		"ONCE_BULLMQ_BACKOFF": {
			help: "first wait of their exponential backoff",
			doc:  "job `backoff`: exponential from this delay between tries (0: at once), ≤ 24h",
		},
		"ONCE_BULLMQ_KEEP_COMPLETED_AGE": {
			help: "completed jobs kept in Redis at most this long (removeOnComplete)",
			doc:  "`removeOnComplete`: completed jobs are kept this long per queue; at least twice `ONCE_DISPATCH_LEASE` (a republished event is deduplicated only while its job is kept) and ≤ 90 days",
		},
		"ONCE_BULLMQ_KEEP_COMPLETED_COUNT": {
			help: "and at most this many",
			doc:  "and at most this many per queue (100–1,000,000)",
		},
		"ONCE_BULLMQ_KEEP_FAILED_AGE": {
			help: "failed jobs kept in Redis at most this long (removeOnFail)",
			doc:  "`removeOnFail`: failed jobs are kept this long per queue (1m–90 days)",
		},
		"ONCE_BULLMQ_KEEP_FAILED_COUNT": {
			help: "and at most this many",
			doc:  "and at most this many per queue (100–1,000,000)",
		},
	},
}
