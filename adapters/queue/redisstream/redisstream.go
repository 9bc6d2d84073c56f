// Package redisstream is the queue on Redis Streams.
//
// A topic is a stream. Publishing is XADD: Publish returns once Redis
// answered with the entry id, and the stream exists from the first XADD, so
// messages published while no worker runs wait in it. Workers read through
// a consumer group (default "once-workers") created at the start of the
// stream ("0"): a group created after messages were published still
// delivers them, and the workers of the group share the messages. Each
// process is one consumer of the group, and each of its subscriptions
// holds up to Prefetch messages unacknowledged at once (subscriber.go). A
// message delivered to a consumer that died before acknowledging stays
// pending; any live consumer claims it once it has been idle for
// MaxIdleTime, checking every ClaimInterval.
//
// Redis is a single node, a Sentinel-managed primary or a Cluster, as the
// URL says (redisconn). On a Cluster each stream is a key of its own, so
// the streams of the event types spread over the masters by their names'
// hash slots; no command of this package spans two streams, so they need
// no hash tag.
//
// Publishing is bounded by the messages' context: the publisher's client
// sets its socket deadlines from it (go-redis ContextTimeoutEnabled), so a
// Redis that hangs ends the call at the deadline, and the connection that
// timed out is discarded rather than left with a reply in flight. Errors
// that are about Redis rather than the messages wrap
// ports.ErrBrokerUnreachable (it is loading, out of memory, read-only, a
// replica without master, out of connections, like the network errors the
// queue package recognizes) or ports.ErrBrokerMisconfigured (a Cluster
// node reached as a single node answers MOVED; refused credentials; see
// redisconn.Classify).
//
// Streams are trimmed by a Trimmer (trim.go), never below what a consumer
// group still needs.
package redisstream

import (
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmredis "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/ports"
)

// DefaultConsumerGroup is the consumer group of the workers.
const DefaultConsumerGroup = "once-workers"

// Config configures Redis Streams publishers and subscribers.
type Config struct {
	// URL names Redis: a single node, a Sentinel-managed primary or a
	// Cluster (see redisconn). A dial_timeout in the URL wins over
	// DialTimeout.
	URL string
	// DialTimeout bounds connecting (default 5s), so an unreachable Redis
	// fails publishes promptly.
	DialTimeout time.Duration

	// MaxLen, when positive, caps each stream at about that many entries
	// (XADD MAXLEN ~). Trimming does not look at consumer groups: entries
	// not yet delivered are trimmed too, so keep it far above any backlog a
	// worker outage can build. Zero (default) keeps every entry; the
	// Trimmer bounds the streams without dropping what a group needs.
	MaxLen int64

	// ConsumerGroup is the workers' consumer group (default
	// DefaultConsumerGroup).
	ConsumerGroup string
	// Consumer names this process in the group (default
	// "<hostname>-<pid>-<random>", unique per subscriber).
	Consumer string
	// ClaimInterval is how often pending messages of other consumers are
	// checked (default 5s); MaxIdleTime is how long a message must have
	// been pending before it is taken over (default 60s). A subscription
	// refreshes the messages it holds every MaxIdleTime/3, so only a dead
	// consumer's messages reach it, however long a job runs.
	ClaimInterval time.Duration
	MaxIdleTime   time.Duration
	// BlockTime is how long one read waits for new entries (default
	// 100ms); it also bounds how long closing a subscription takes.
	BlockTime time.Duration
	// Prefetch is how many messages a subscription hands out before any
	// is acknowledged (default DefaultPrefetch): the worker's buffer, so
	// it can run and schedule many jobs at once.
	Prefetch int
	// NackDelay is how long a nacked message waits before it is handed
	// out again (default 100ms), so a handler that nacks at once does not
	// spin.
	NackDelay time.Duration

	// Tracing, when set, gives each Redis command a span (redisconn).
	Tracing trace.TracerProvider
}

// conn is how the package's clients reach Redis; followContext ends every
// call with its context.
func (c Config) conn(followContext bool) redisconn.Config {
	return redisconn.Config{URL: c.URL, DialTimeout: c.DialTimeout, FollowContext: followContext, Tracing: c.Tracing}
}

func (c Config) client() (redis.UniversalClient, error) {
	client, _, err := redisconn.NewClient(c.conn(false))
	return client, err
}

// NewPublisher returns a publisher with its own Redis client, closed by
// Close. It does not connect until the first publish.
//
// A Publish of many messages is one pipeline: every XADD is written, then
// every answer read, one round trip for the batch (watermill-redisstream's
// publisher sends them one after another, a round trip each, which was
// 37 % of a Dispatcher's time). The entries are the library's
// (DefaultMarshallerUnmarshaller), so its subscriber reads them as before.
func NewPublisher(cfg Config, logger *slog.Logger) (message.Publisher, error) {
	// Each call ends with its context: the socket deadlines come from it.
	client, _, err := redisconn.NewClient(cfg.conn(true))
	if err != nil {
		return nil, err
	}
	return &publisher{client: client, maxLen: cfg.MaxLen}, nil
}

// publisher XADDs a call's messages in one pipeline (on a Cluster, one per
// master holding the streams) and marks Redis's broker-wide errors as
// such.
type publisher struct {
	client redis.UniversalClient
	maxLen int64
	closed atomic.Bool
}

func (p *publisher) Publish(topic string, msgs ...*message.Message) error {
	if p.closed.Load() {
		return fmt.Errorf("%w: redisstream: publisher closed", ports.ErrBrokerUnreachable)
	}
	if len(msgs) == 0 {
		return nil
	}
	var marshaller wmredis.DefaultMarshallerUnmarshaller
	ctx := msgs[0].Context()
	pipe := p.client.Pipeline()
	for _, msg := range msgs {
		values, err := marshaller.Marshal(topic, msg)
		if err != nil {
			return fmt.Errorf("redisstream: marshal message %s: %w", msg.UUID, err)
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: topic, Values: values, MaxLen: p.maxLen, Approx: true})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redisstream: xadd %d message(s): %w", len(msgs), redisconn.Classify(err))
	}
	return nil
}

func (p *publisher) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	return p.client.Close()
}

// consumerName is unique per subscriber and says which host and process
// holds a pending message.
func consumerName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), watermill.NewShortUUID()[:8])
}
