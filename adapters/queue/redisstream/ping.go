package redisstream

import (
	"context"

	"github.com/oncehq/once/adapters/queue/redisconn"
)

// Ping checks that the Redis cfg.URL names answers and is what the URL says
// (redisconn.Ping), within the dial timeout.
func Ping(ctx context.Context, cfg Config) error {
	return redisconn.Ping(ctx, cfg.conn(false))
}
