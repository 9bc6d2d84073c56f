package storm

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// redisAddress is host:port of a redis:// URL.
func redisAddress(redisURL string) (string, error) {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return "", errors.New("invalid redis URL")
	}
	return opts.Addr, nil
}

// redisVia is redisURL with its host:port replaced by addr (a fault proxy
// in front of it).
func redisVia(redisURL, addr string) (string, error) {
	u, err := url.Parse(redisURL)
	if err != nil {
		return "", errors.New("invalid redis URL")
	}
	u.Host = addr
	return u.String(), nil
}

// deleteRedisPrefix removes every key under prefix: the streams and
// consumer groups of one deployment, nothing of anyone else's.
func deleteRedisPrefix(ctx context.Context, redisURL, prefix string) error {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return errors.New("invalid redis URL")
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, prefix+"*", 500).Result()
		if err != nil {
			return fmt.Errorf("redis: scan %s*: %w", prefix, err)
		}
		if len(keys) > 0 {
			if err := rdb.Unlink(ctx, keys...).Err(); err != nil {
				return fmt.Errorf("redis: unlink under %s: %w", prefix, err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// redactedRedis is host:port of a Redis URL, for the report.
func redactedRedis(redisURL string) string {
	if addr, err := redisAddress(redisURL); err == nil {
		return addr
	}
	return "(unparsable URL)"
}
