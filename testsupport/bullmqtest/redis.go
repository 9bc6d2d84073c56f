package bullmqtest

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// RedisURL is where the tests find Redis (REDIS_URL overrides).
func RedisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Prefix returns a BullMQ key prefix of the test's own, and deletes every
// key under it when the test ends (never anything else: Redis is shared).
func Prefix(t testing.TB, redisURL string) string {
	t.Helper()
	prefix := "once-test-bull-" + uuid.NewString()[:8]
	t.Cleanup(func() {
		opts, err := redis.ParseURL(redisURL)
		if err != nil {
			return
		}
		c := redis.NewClient(opts)
		defer c.Close()
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Logf("scan %s:*: %v", prefix, err)
			return
		}
		for len(keys) > 0 {
			n := min(len(keys), 1000)
			if err := c.Del(ctx, keys[:n]...).Err(); err != nil {
				t.Logf("delete the test's BullMQ keys: %v", err)
				return
			}
			keys = keys[n:]
		}
	})
	return prefix
}

// Client is a Redis client closed with the test.
func Client(t testing.TB, redisURL string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatalf("redis URL: %v", err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
