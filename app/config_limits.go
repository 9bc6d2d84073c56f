package app

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/domain/webhooks"
)

// LimitsConfig is the per-workspace limits (app/limits.go): the rate of
// writes each workspace may execute (REQUESTS/UNIT[:BURST], or off), the
// workspaces that have another (ID=RATE,...), where the rate is metered
// (redis: shared by every process; process: this one alone; empty: redis
// with DATABASE_URL, process on the embedded store), and the units of
// work one workspace may have in flight in one process (auto: half of
// ONCE_DB_MAX_CONNS with DATABASE_URL, none on the embedded store; off; or
// a number), and how long one over that cap waits its turn before it is
// refused (0: refused at once).
type LimitsConfig struct {
	RateLimit           string `env:"ONCE_RATE_LIMIT"`
	RateLimitWorkspaces string `env:"ONCE_RATE_LIMIT_WORKSPACES"`
	RateLimitStore      string `env:"ONCE_RATE_LIMIT_STORE"`
	// RateLimitTimeout bounds one question to the rate limiter's Redis;
	// past it the write goes through unmetered.
	RateLimitTimeout        time.Duration `env:"ONCE_RATE_LIMIT_TIMEOUT"`
	WorkspaceMaxConcurrency string        `env:"ONCE_WORKSPACE_MAX_CONCURRENCY"`
	WorkspaceQueueTimeout   time.Duration `env:"ONCE_WORKSPACE_QUEUE_TIMEOUT"`
	// OperationWaiters and WorkspaceOperationWaiters cap the reads that
	// wait for an operation's end (?wait=) in one process, in all and per
	// workspace: each holds a request and a client connection, never a
	// database connection.
	OperationWaiters          int `env:"ONCE_OPERATION_WAITERS"`
	WorkspaceOperationWaiters int `env:"ONCE_WORKSPACE_OPERATION_WAITERS"`
	// WorkspaceWebhookEndpoints caps one workspace's webhook endpoints:
	// each is a delivery job at every operation's end.
	WorkspaceWebhookEndpoints int `env:"ONCE_WORKSPACE_WEBHOOK_ENDPOINTS"`
}

func defaultLimitsConfig() LimitsConfig {
	return LimitsConfig{
		RateLimit: "100/s:200", RateLimitTimeout: limits.DefaultStoreTimeout,
		WorkspaceMaxConcurrency: "auto", WorkspaceQueueTimeout: 5 * time.Second,
		OperationWaiters: 10_000, WorkspaceOperationWaiters: 1_000,
		WorkspaceWebhookEndpoints: 100,
	}
}

// webhookLimits is what the webhook endpoints' use case is bounded by.
func (c LimitsConfig) webhookLimits() webhooks.Limits {
	return webhooks.Limits{MaxEndpoints: c.WorkspaceWebhookEndpoints}
}

func (c LimitsConfig) limitsPolicy() (limits.Policy, error) {
	return limits.ParsePolicy(c.RateLimit, c.RateLimitWorkspaces)
}

// rateLimitStore is where the rate is metered: as set, or Redis when the
// service runs on PostgreSQL (as many processes as the deployment has,
// which must share one allowance) and this process on the embedded store
// (one process).
func (c LimitsConfig) rateLimitStore(embedded bool) string {
	return orByStorage(c.RateLimitStore, embedded, RateLimitStoreProcess, RateLimitStoreRedis)
}

// workspaceMaxConcurrency is the cap on one workspace's work in flight in
// one process (0: none). auto leaves half the pool to the other
// workspaces, and the Dispatcher and workers of the process; the embedded
// store has no pool to share. What is over the cap waits its turn
// (WorkspaceQueueTimeout), so the cap bounds the connections a workspace
// holds, not the requests a client may have in flight.
func (c LimitsConfig) workspaceMaxConcurrency(embedded bool, dbMaxConns int) int {
	switch v := strings.TrimSpace(c.WorkspaceMaxConcurrency); v {
	case "auto":
		if embedded {
			return 0
		}
		return max(1, dbMaxConns/2)
	case "off":
		return 0
	default:
		n, _ := strconv.Atoi(v) // Validate refused anything else
		return n
	}
}

// Validate checks the rates, the store (and its Redis, redisURL) and the
// cap.
func (c LimitsConfig) Validate(embedded bool, redisURL string) error {
	return errors.Join(
		c.validateRates(),
		invalidIf(!slices.Contains([]string{"", RateLimitStoreProcess, RateLimitStoreRedis}, c.RateLimitStore), "ONCE_RATE_LIMIT_STORE=%q must be redis, process or empty (redis with DATABASE_URL)", c.RateLimitStore),
		c.validateRedis(embedded, redisURL),
		invalidIf(outside(c.RateLimitTimeout, time.Millisecond, 5*time.Second), "ONCE_RATE_LIMIT_TIMEOUT=%s must be between 1ms and 5s: a write holds its database connection while it waits", c.RateLimitTimeout),
		invalidIf(!c.validConcurrency(), "ONCE_WORKSPACE_MAX_CONCURRENCY=%q must be auto, off or a number from 1 to 1000", c.WorkspaceMaxConcurrency),
		invalidIf(outside(c.WorkspaceQueueTimeout, 0, time.Minute), "ONCE_WORKSPACE_QUEUE_TIMEOUT=%s must be between 0 and 1m: a request over its workspace's cap waits that long for a slot", c.WorkspaceQueueTimeout),
		invalidIf(outside(c.OperationWaiters, 1, 1_000_000), "ONCE_OPERATION_WAITERS=%d must be between 1 and 1000000", c.OperationWaiters),
		invalidIf(outside(c.WorkspaceOperationWaiters, 1, c.OperationWaiters), "ONCE_WORKSPACE_OPERATION_WAITERS=%d must be between 1 and ONCE_OPERATION_WAITERS (%d)", c.WorkspaceOperationWaiters, c.OperationWaiters),
		invalidIf(outside(c.WorkspaceWebhookEndpoints, 1, 10_000), "ONCE_WORKSPACE_WEBHOOK_ENDPOINTS=%d must be between 1 and 10000: every operation's end writes one delivery per endpoint", c.WorkspaceWebhookEndpoints),
	)
}

// validateRates parses the default rate, then the workspaces' own.
func (c LimitsConfig) validateRates() error {
	if _, err := limits.ParseRate(c.RateLimit); err != nil {
		return fmt.Errorf("ONCE_RATE_LIMIT: %v", err)
	}
	_, err := c.limitsPolicy()
	return invalidIf(err != nil, "ONCE_RATE_LIMIT_WORKSPACES: %v", err)
}

// validateRedis checks the Redis URL when the rate is metered there.
func (c LimitsConfig) validateRedis(embedded bool, redisURL string) error {
	if c.rateLimitStore(embedded) != RateLimitStoreRedis {
		return nil
	}
	_, err := redisconn.TopologyOf(redisURL)
	return invalidIf(err != nil, "ONCE_REDIS_URL (the rate limiter's Redis): %v", err)
}

// validConcurrency says whether the cap is auto, off or a number from 1 to
// 1000.
func (c LimitsConfig) validConcurrency() bool {
	switch v := strings.TrimSpace(c.WorkspaceMaxConcurrency); v {
	case "auto", "off":
		return true
	default:
		n, err := strconv.Atoi(v)
		return err == nil && !outside(n, 1, 1000)
	}
}

func (LimitsConfig) settings() settingGroup { return limitsSettings }

var limitsSettings = settingGroup{
	title: "Limits per workspace",
	vars: map[string]setting{
		"ONCE_RATE_LIMIT": {
			help: "writes each workspace may execute: REQUESTS/UNIT[:BURST] (UNIT s, m or h; BURST defaults to REQUESTS), or off; over it: 429 RATE_LIMITED",
			doc:  "the writes each workspace may execute: `REQUESTS/UNIT[:BURST]` (`UNIT` `s`, `m` or `h`; `BURST`, the writes allowed at once after a quiet spell, defaults to `REQUESTS`), or `off`. Over it: `429 RATE_LIMITED` (see [Limits per workspace](#limits-per-workspace))",
		},
		"ONCE_RATE_LIMIT_WORKSPACES": {
			help: "workspaces with a rate of their own: WORKSPACE_ID=RATE,... (RATE as ONCE_RATE_LIMIT, or off)",
			doc:  "workspaces with a rate of their own, `WORKSPACE_ID=RATE,…` (`RATE` as above, or `off`)",
		},
		"ONCE_RATE_LIMIT_STORE": {
			help:       "where the rate is metered: redis (ONCE_REDIS_URL, shared by every process) or process (this one alone); empty: redis with DATABASE_URL, process on the embedded store",
			doc:        "where the rate is metered: `redis` (`ONCE_REDIS_URL`: one allowance shared by every process) or `process` (each process its own)",
			docDefault: "`redis` with PostgreSQL, `process` embedded",
		},
		"ONCE_RATE_LIMIT_TIMEOUT": {
			help: "how long a write waits for the rate limiter's Redis (it asks inside the write's transaction); past it, or on an error, the write goes through unmetered",
			doc:  "how long a write waits for the rate limiter's Redis (1ms to 5s; it asks inside the write's transaction, holding its connection); past it, or on an error, the write goes through unmetered",
		},
		"ONCE_WORKSPACE_MAX_CONCURRENCY": {
			help: "requests one workspace may have in progress in one process (over it they wait their turn, see ONCE_WORKSPACE_QUEUE_TIMEOUT): a number, off, or auto (half of ONCE_DB_MAX_CONNS with DATABASE_URL, off on the embedded store)",
			doc:  "requests one workspace may have in progress in one process (over it they wait their turn, see the next line): a number, `off`, or `auto`, half of `ONCE_DB_MAX_CONNS` with PostgreSQL (5 by default) and off on the embedded store",
		},
		"ONCE_WORKSPACE_QUEUE_TIMEOUT": {
			help: "how long a request over ONCE_WORKSPACE_MAX_CONCURRENCY waits, first come first served within its workspace and holding no connection, for one of those to finish (0 to 1m; 0: at once); then, or with " + strconv.Itoa(limits.WaitingPerSlot) + " times the cap already waiting, 429 RATE_LIMITED",
			doc:  "how long a request over that cap waits, first come first served within its workspace and holding no connection, for one of them to finish (`0` to `1m`; `0` refuses at once); then, or when " + strconv.Itoa(limits.WaitingPerSlot) + " times the cap already wait, `429 RATE_LIMITED` (see [Limits per workspace](#limits-per-workspace))",
		},
		"ONCE_OPERATION_WAITERS": {
			help: "reads of an operation that may wait for its end (GET /v1/operations/{id}?wait=) at once in one process; over it: 429 TOO_MANY_WAITERS",
			doc:  "reads of an operation that may wait for its end (`GET /v1/operations/{id}?wait=`, see [Waiting for an operation](api.md#waiting-for-an-operation)) at once in one process; each holds a request and a client connection, no database connection, and none of its workspace's slots of `ONCE_WORKSPACE_MAX_CONCURRENCY` while it waits (these caps bound waits instead). Over it: `429 TOO_MANY_WAITERS`",
		},
		"ONCE_WORKSPACE_OPERATION_WAITERS": {
			help: "of those, how many one workspace may have in one process; over it: 429 TOO_MANY_WAITERS",
			doc:  "of those, how many one workspace may have in one process (at most `ONCE_OPERATION_WAITERS`); over it: `429 TOO_MANY_WAITERS`",
		},
		"ONCE_WORKSPACE_WEBHOOK_ENDPOINTS": {
			help: "webhook endpoints one workspace may have (1 to 10000; every operation's end writes one delivery per subscribed endpoint); over it: 409 LIMIT_REACHED. One URL twice in a workspace: 409 WEBHOOK_ENDPOINT_EXISTS",
			doc:  "webhook endpoints one workspace may have (`1` to `10000`; every operation's end writes one delivery per subscribed endpoint). Over it: `409 LIMIT_REACHED`. One URL twice in a workspace is refused: `409 WEBHOOK_ENDPOINT_EXISTS`",
		},
	},
}
