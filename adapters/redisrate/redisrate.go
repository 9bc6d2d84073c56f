// Package redisrate implements ports.RateLimiter in Redis with
// github.com/go-redis/redis_rate (the generic cell rate algorithm as one
// Lua script), so every process of a deployment spends from the same
// allowance.
//
// Each workspace is one key, read and written by one script call, so it
// runs unchanged on a single node, behind a Sentinel and on a Cluster (a
// script over one key never crosses slots); the key is hash-tagged with the
// workspace all the same, so anything later kept beside it lands in the
// same slot. The script reads Redis's own clock (TIME), so the processes'
// clocks need not agree.
package redisrate

import (
	"context"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Limiter implements ports.RateLimiter.
type Limiter struct {
	limiter *redis_rate.Limiter
}

var _ ports.RateLimiter = (*Limiter)(nil)

// New meters on client. Its calls should end with their context (redisconn
// Config.FollowContext), which is how the caller bounds them.
func New(client redis.UniversalClient) *Limiter {
	return &Limiter{limiter: redis_rate.NewLimiter(client)}
}

// Key is the Redis key of workspace's allowance (redis_rate adds its
// "rate:" prefix).
func Key(workspace uuid.UUID) string { return "once:{" + workspace.String() + "}:writes" }

// Take implements ports.RateLimiter.
func (l *Limiter) Take(ctx context.Context, workspace uuid.UUID, rate model.Rate) (model.RateDecision, error) {
	res, err := l.limiter.Allow(ctx, Key(workspace), redis_rate.Limit{Rate: rate.Requests, Period: rate.Per, Burst: rate.Burst})
	if err != nil {
		return model.RateDecision{}, err
	}
	d := model.RateDecision{Allowed: res.Allowed > 0, Remaining: res.Remaining}
	if !d.Allowed {
		d.RetryAfter = res.RetryAfter
	}
	return d, nil
}
