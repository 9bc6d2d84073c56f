package bullmqtest

import (
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/testsupport/redistest"
)

// RedisURL is where the tests find the shared single Redis (REDIS_URL
// overrides).
func RedisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Prefix returns a BullMQ key prefix of the test's own, hash-tagged when
// redisURL names a Redis Cluster (so each queue lives in one slot), and
// deletes every key under it when the test ends (never anything else:
// Redis is shared).
func Prefix(t testing.TB, redisURL string) string {
	t.Helper()
	prefix := "once-test-bull-" + uuid.NewString()[:8]
	if topology, err := redisconn.TopologyOf(redisURL); err == nil && topology == redisconn.Cluster {
		prefix = "{" + prefix + "}"
	}
	redistest.DeleteKeysLater(t, redisURL, prefix+":")
	return prefix
}

// Client is a client of the Redis redisURL names, closed with the test.
func Client(t testing.TB, redisURL string) redis.UniversalClient {
	t.Helper()
	c, _, err := redisconn.NewClient(redisconn.Config{URL: redisURL})
	if err != nil {
		t.Fatalf("redis URL: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
