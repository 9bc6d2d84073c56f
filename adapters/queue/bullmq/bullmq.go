// Package bullmq is the queue of the original design: outbox events become
// BullMQ jobs in Redis, consumed by stock BullMQ workers in Node.js
// (ports.Publisher only: once does not consume BullMQ).
//
// Each event becomes one job in the queue its event type is routed to
// (Routes): job id = event id, job name = event type, job data = Data (the
// payload, the event and workspace ids, the traceparent), and the job
// options of JobOptions. The job is written by a small Lua script of our
// own (add_job.lua) into BullMQ's Redis layout, which the tests check
// against a real BullMQ Worker of the version in VerifiedWith. A job id that
// already exists is the same event published again after a Dispatcher
// crashed between publishing and marking: the script leaves the first job
// alone and Publish counts it as accepted.
//
// A batch is one round trip: one EVALSHA per job, pipelined. The layout is
// checked twice: Verify at start-up (the queues' "meta" version and the
// types of their keys), and by the script on every job, so a queue taken
// over by an unverified BullMQ version gets no job from once.
//
// Redis is a single node, a Sentinel-managed primary or a Cluster, as the
// URL says (redisconn). The script touches every key of a queue at once,
// which a Cluster allows only within one hash slot: there the prefix, or
// every queue name, must hold a hash tag ("{bull}"), as BullMQ's own
// documentation asks of its Node.js side (New refuses otherwise, see
// HashTagged).
package bullmq

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// DefaultPrefix is BullMQ's own default key prefix.
const DefaultPrefix = "bull"

// Config configures a Publisher.
type Config struct {
	// URL names Redis: a single node, a Sentinel-managed primary or a
	// Cluster (see redisconn). A dial_timeout in the URL wins over
	// DialTimeout (default 5s).
	URL         string
	DialTimeout time.Duration
	// Prefix is the BullMQ key prefix, the "prefix" option of the Node.js
	// Queue and Worker (default DefaultPrefix). On a Redis Cluster it holds
	// a hash tag, e.g. "{bull}", unless every queue name does.
	Prefix string
	Routes Routes
	Job    JobOptions
	// Tracing, when set, gives each Redis command a span (redisconn).
	Tracing trace.TracerProvider
}

// Publisher writes outbox events as BullMQ jobs.
type Publisher struct {
	client redis.UniversalClient
	cfg    Config
	now    func() time.Time
}

var _ ports.Publisher = (*Publisher)(nil)

//go:embed add_job.lua
var addJobLua string

// addJob is add_job.lua; go-redis knows its SHA1 for EVALSHA.
var addJob = redis.NewScript(addJobLua)

// New returns a publisher with its own Redis client, closed by Close. It
// does not connect until Verify or the first Publish. On a Redis Cluster
// it refuses (domain.CodeValidation) a prefix and routes that would spread
// a queue's keys over several hash slots (see HashTagged).
func New(cfg Config) (*Publisher, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	topology, err := redisconn.TopologyOf(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("bullmq: %w", err)
	}
	if topology == redisconn.Cluster && !HashTagged(cfg.Prefix, cfg.Routes) {
		return nil, domain.Wrap(domain.CodeValidation, ErrNoHashTag, "bullmq")
	}
	// Socket deadlines follow the caller's context, so a publish bounded
	// by the Dispatcher never outlives it (and never leaves a goroutine).
	client, _, err := redisconn.NewClient(redisconn.Config{URL: cfg.URL, DialTimeout: cfg.DialTimeout, FollowContext: true, Tracing: cfg.Tracing})
	if err != nil {
		return nil, fmt.Errorf("bullmq: %w", err)
	}
	return &Publisher{client: client, cfg: cfg, now: time.Now}, nil
}

// Publish implements ports.Publisher: it returns nil once Redis holds a
// job for every message (added now, or found from an earlier publish).
// Errors are domain.CodeValidation for a message that cannot be a job
// (nothing is sent), and domain.CodeUnavailable when Redis did not answer
// or a queue's layout is unverified (ErrUnverifiedLayout); jobs of the
// batch may have been added by then, which republishing tolerates.
func (p *Publisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return unavailable("bullmq: publish", context.Cause(ctx))
	}
	jobs := make([]job, len(msgs))
	for i, m := range msgs {
		queue := p.cfg.Routes.Queue(m.Type)
		j, err := newJob(m, queue, p.cfg.Routes.Priority(m.Type), p.cfg.Job)
		if err != nil {
			return err
		}
		jobs[i] = j
	}
	err := p.add(ctx, jobs)
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis restarted or its scripts were flushed: load it and send the
		// batch again (jobs added the first time are found, not doubled).
		if err = addJob.Load(ctx, p.client).Err(); err == nil {
			err = p.add(ctx, jobs)
		}
	}
	if err != nil {
		var layout *LayoutError
		if errors.As(err, &layout) {
			// Every job of that queue would fail the same way until an
			// operator fixes it: the broker's fault, not the event's, so it
			// spends no attempts (the Dispatcher's breaker backs off).
			return domain.Wrap(domain.CodeUnavailable, fmt.Errorf("%w: %w", ports.ErrBrokerMisconfigured, err), "bullmq: a queue's layout is unverified")
		}
		return unavailable(fmt.Sprintf("bullmq: add %d job(s)", len(jobs)), err)
	}
	return nil
}

// add runs add_job.lua for every job in one pipeline and returns the first
// failure.
func (p *Publisher) add(ctx context.Context, jobs []job) error {
	now := strconv.FormatInt(p.now().UnixMilli(), 10)
	cmds, err := p.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, j := range jobs {
			addJob.EvalSha(ctx, pipe, p.keys(j), j.id, j.name, j.data, j.opts, now, j.priority, VerifiedVersionPrefix)
		}
		return nil
	})
	for i, c := range cmds {
		if cerr := c.Err(); cerr != nil {
			if v, ok := strings.CutPrefix(cerr.Error(), "ONCE_UNVERIFIED_LAYOUT "); ok {
				return &LayoutError{Prefix: p.cfg.Prefix, Queue: jobs[i].queue, Found: v}
			}
			return cerr
		}
	}
	return err
}

// keys are the KEYS of add_job.lua for j, in its order.
func (p *Publisher) keys(j job) []string {
	k := func(suffix string) string { return p.cfg.Prefix + ":" + j.queue + ":" + suffix }
	return []string{k(j.id), k("meta"), k("wait"), k("prioritized"), k("pc"), k("marker"), k("active"), k("events")}
}

// Close closes the Redis client; Publish fails afterwards.
func (p *Publisher) Close() error { return p.client.Close() }

// unavailable wraps a Redis failure: its text is sanitized because callers
// store it (outbox last_error) and show it to operators.
// A failure of Redis as a whole (down, unreachable, loading, out of
// memory, …) wraps ports.ErrBrokerUnreachable, and Redis set up otherwise
// than the URL and prefix say (MOVED, CROSSSLOT, refused credentials)
// ports.ErrBrokerMisconfigured, so that neither spends delivery attempts.
func unavailable(what string, err error) error {
	err = redisconn.Classify(err)
	if queue.BrokerUnreachable(err) && !ports.BrokersFault(err) {
		err = fmt.Errorf("%w: %w", ports.ErrBrokerUnreachable, err)
	}
	return domain.Wrap(domain.CodeUnavailable, queue.Sanitized(err), what)
}
