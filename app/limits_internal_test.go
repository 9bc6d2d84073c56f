package app

import (
	"strings"
	"testing"
	"time"
)

// The limits' settings: defaults by storage, and each bad value refused
// naming its variable.
func TestConfigLimitsDefaultsAndRefusals(t *testing.T) {
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WorkspaceQueueTimeout != 5*time.Second {
		t.Fatalf("want a wait of 5s for a workspace's slot, got %s", cfg.WorkspaceQueueTimeout)
	}
	if cfg.rateLimitStore(cfg.Embedded()) != RateLimitStoreProcess || cfg.workspaceMaxConcurrency(cfg.Embedded(), cfg.DBMaxConns) != 0 {
		t.Fatalf("embedded: want the in-process limiter and no cap, got %s and %d", cfg.rateLimitStore(cfg.Embedded()), cfg.workspaceMaxConcurrency(cfg.Embedded(), cfg.DBMaxConns))
	}
	cfg.DatabaseURL, cfg.DBMaxConns = "postgres://x@127.0.0.1/x", 10
	if cfg.rateLimitStore(cfg.Embedded()) != RateLimitStoreRedis || cfg.workspaceMaxConcurrency(cfg.Embedded(), cfg.DBMaxConns) != 5 {
		t.Fatalf("PostgreSQL: want Redis and half the pool, got %s and %d", cfg.rateLimitStore(cfg.Embedded()), cfg.workspaceMaxConcurrency(cfg.Embedded(), cfg.DBMaxConns))
	}
	for name, env := range map[string]map[string]string{
		"ONCE_RATE_LIMIT":                {"ONCE_RATE_LIMIT": "100/d"},
		"ONCE_RATE_LIMIT_WORKSPACES":     {"ONCE_RATE_LIMIT_WORKSPACES": "nope=1/s"},
		"ONCE_RATE_LIMIT_STORE":          {"ONCE_RATE_LIMIT_STORE": "memcached"},
		"ONCE_RATE_LIMIT_TIMEOUT":        {"ONCE_RATE_LIMIT_TIMEOUT": "0s"},
		"ONCE_WORKSPACE_MAX_CONCURRENCY": {"ONCE_WORKSPACE_MAX_CONCURRENCY": "0"},
		"ONCE_WORKSPACE_QUEUE_TIMEOUT":   {"ONCE_WORKSPACE_QUEUE_TIMEOUT": "2m"},
		"ONCE_REDIS_URL":                 {"ONCE_RATE_LIMIT_STORE": "redis", "ONCE_REDIS_URL": "http://nope"},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("want an error naming %s, got %v", name, err)
			}
		})
	}
}
