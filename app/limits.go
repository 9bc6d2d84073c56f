package app

import (
	"context"
	"fmt"
	"log/slog"
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

func newLimits(lc fx.Lifecycle, cfg LimitsConfig, db DatabaseConfig, brokers QueueConfig, clock ports.Clock, metrics *prometheus.Metrics, log *slog.Logger) (*limits.Limits, error) {
	policy, err := cfg.limitsPolicy()
	if err != nil {
		return nil, err
	}
	var limiter ports.RateLimiter
	switch cfg.rateLimitStore(db.Embedded()) {
	case RateLimitStoreRedis:
		client, _, err := redisconn.NewClient(redisconn.Config{URL: brokers.RedisURL, DialTimeout: limitsDialTimeout, FollowContext: true})
		if err != nil {
			return nil, fmt.Errorf("ONCE_REDIS_URL (the rate limiter's Redis): %w", err)
		}
		lc.Append(fx.StopHook(func(context.Context) error { return client.Close() }))
		limiter = redisrate.New(client)
	default:
		limiter = memory.NewRateLimiter(clock)
	}
	return limits.New(limits.Config{
		Policy: policy, MaxConcurrent: cfg.workspaceMaxConcurrency(db.Embedded(), db.DBMaxConns), QueueTimeout: cfg.WorkspaceQueueTimeout,
		StoreTimeout: cfg.RateLimitTimeout,
	}, limiter, clock, metrics, log.With("component", "limits")), nil
}
