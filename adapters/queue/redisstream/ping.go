package redisstream

import (
	"context"
	"net"

	"github.com/oncehq/once/adapters/queue"
)

// Ping checks that Redis answers at cfg.URL (connect, AUTH, PING), within
// the dial timeout. A Redis that does not is a *queue.UnreachableError
// naming its address. The TCP connect comes first, on its own, so a Redis
// that is down costs one plain error and none of go-redis's retry logging.
func Ping(ctx context.Context, cfg Config) error {
	client, err := cfg.client()
	if err != nil {
		return err
	}
	defer client.Close()
	opts := client.Options()
	unreachable := func(err error) error { return &queue.UnreachableError{Broker: "redis", Addr: opts.Addr, Err: err} }
	dialer := net.Dialer{Timeout: opts.DialTimeout}
	conn, err := dialer.DialContext(ctx, opts.Network, opts.Addr)
	if err != nil {
		return unreachable(err)
	}
	_ = conn.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		return unreachable(err)
	}
	return nil
}
