package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/adapters/redisrate"
	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/ports"
)

// Where the rate of writes is metered (ONCE_RATE_LIMIT_STORE).
const (
	RateLimitStoreRedis   = "redis"
	RateLimitStoreProcess = "process"
)

// limitsDialTimeout bounds connecting to the rate limiter's Redis; each
// question is bounded by limits.DefaultStoreTimeout besides.
const limitsDialTimeout = time.Second

// LimitsModule provides the workspaces' limits to the API: the idempotency
// service (CoreModule) and httpapi.Deps take them when present.
var LimitsModule = fx.Module("limits",
	fx.Provide(newLimits),
)

func newLimits(lc fx.Lifecycle, cfg Config, clock ports.Clock, metrics *prometheus.Metrics, log *slog.Logger) (*limits.Limits, error) {
	policy, err := cfg.limitsPolicy()
	if err != nil {
		return nil, err
	}
	var limiter ports.RateLimiter
	switch cfg.rateLimitStore() {
	case RateLimitStoreRedis:
		client, _, err := redisconn.NewClient(redisconn.Config{URL: cfg.RedisURL, DialTimeout: limitsDialTimeout, FollowContext: true})
		if err != nil {
			return nil, fmt.Errorf("ONCE_REDIS_URL (the rate limiter's Redis): %w", err)
		}
		lc.Append(fx.StopHook(func(context.Context) error { return client.Close() }))
		limiter = redisrate.New(client)
	default:
		limiter = memory.NewRateLimiter(clock)
	}
	return limits.New(limits.Config{
		Policy: policy, MaxConcurrent: cfg.workspaceMaxConcurrency(), QueueTimeout: cfg.WorkspaceQueueTimeout,
		StoreTimeout: cfg.RateLimitTimeout,
	}, limiter, clock, metrics, log.With("component", "limits")), nil
}

func (c Config) limitsPolicy() (limits.Policy, error) {
	return limits.ParsePolicy(c.RateLimit, c.RateLimitWorkspaces)
}

// rateLimitStore is where the rate is metered: as set, or Redis when the
// service runs on PostgreSQL (as many processes as the deployment has,
// which must share one allowance) and this process on the embedded store
// (one process).
func (c Config) rateLimitStore() string {
	return c.orByStorage(c.RateLimitStore, RateLimitStoreProcess, RateLimitStoreRedis)
}

// workspaceMaxConcurrency is the cap on one workspace's work in flight in
// one process (0: none). auto leaves half the pool to the other
// workspaces, and the Dispatcher and workers of the process; the embedded
// store has no pool to share. What is over the cap waits its turn
// (WorkspaceQueueTimeout), so the cap bounds the connections a workspace
// holds, not the requests a client may have in flight.
func (c Config) workspaceMaxConcurrency() int {
	switch v := strings.TrimSpace(c.WorkspaceMaxConcurrency); v {
	case "auto":
		if c.Embedded() {
			return 0
		}
		return max(1, c.DBMaxConns/2)
	case "off":
		return 0
	default:
		n, _ := strconv.Atoi(v) // Validate refused anything else
		return n
	}
}

func (c Config) validateLimits() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, err := limits.ParseRate(c.RateLimit); err != nil {
		bad("ONCE_RATE_LIMIT: %v", err)
	} else if _, err := c.limitsPolicy(); err != nil {
		bad("ONCE_RATE_LIMIT_WORKSPACES: %v", err)
	}
	switch c.RateLimitStore {
	case "", RateLimitStoreProcess:
	case RateLimitStoreRedis:
	default:
		bad("ONCE_RATE_LIMIT_STORE=%q must be redis, process or empty (redis with DATABASE_URL)", c.RateLimitStore)
	}
	if c.rateLimitStore() == RateLimitStoreRedis {
		if _, err := redisconn.TopologyOf(c.RedisURL); err != nil {
			bad("ONCE_REDIS_URL (the rate limiter's Redis): %v", err)
		}
	}
	if c.RateLimitTimeout < time.Millisecond || c.RateLimitTimeout > 5*time.Second {
		bad("ONCE_RATE_LIMIT_TIMEOUT=%s must be between 1ms and 5s: a write holds its database connection while it waits", c.RateLimitTimeout)
	}
	switch v := strings.TrimSpace(c.WorkspaceMaxConcurrency); v {
	case "auto", "off":
	default:
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 1000 {
			bad("ONCE_WORKSPACE_MAX_CONCURRENCY=%q must be auto, off or a number from 1 to 1000", c.WorkspaceMaxConcurrency)
		}
	}
	if c.WorkspaceQueueTimeout < 0 || c.WorkspaceQueueTimeout > time.Minute {
		bad("ONCE_WORKSPACE_QUEUE_TIMEOUT=%s must be between 0 and 1m: a request over its workspace's cap waits that long for a slot", c.WorkspaceQueueTimeout)
	}
	return errs
}
