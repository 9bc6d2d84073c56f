package redisconn

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue"
)

// Ping checks that the Redis cfg names answers, and is what the URL says,
// within the dial timeout:
//   - a single node answers PING and is neither a Cluster node nor a
//     Sentinel (INFO server's redis_mode): a Cluster node would answer
//     MOVED for most keys;
//   - a Sentinel URL reaches a Sentinel that names the master, and the
//     master answers PING;
//   - a Cluster URL reaches a cluster whose every master answers PING.
//
// A Redis that does not answer is a *queue.UnreachableError, one that is
// not what the URL says a *queue.MisconfiguredError; both name the
// address, never the URL. The TCP connect to the first address comes first,
// on its own, so a Redis that is down costs one plain error and none of
// go-redis's retry logging.
func Ping(ctx context.Context, cfg Config) error {
	o, err := cfg.options()
	if err != nil {
		return err
	}
	addr := o.addr()
	unreachable := func(err error) error { return &queue.UnreachableError{Broker: "redis", Addr: addr, Err: err} }
	dialer := net.Dialer{Timeout: dialTimeout(o)}
	network := "tcp"
	if o.topology == Single {
		network = o.single.Network // "unix" for a unix:// URL
	}
	conn, err := dialer.DialContext(ctx, network, addr)
	if err != nil {
		return unreachable(err)
	}
	_ = conn.Close()

	client := o.newClient()
	defer client.Close()
	switch c := client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return node.Ping(ctx).Err() })
	default:
		err = client.Ping(ctx).Err()
	}
	if err == nil && o.topology == Single {
		err = singleNode(ctx, client)
	}
	switch {
	case err == nil:
		return nil
	case Misconfigured(err):
		return &queue.MisconfiguredError{Broker: "redis", Addr: addr, Reason: hint(err), Err: err}
	case isMisconfigured(err):
		return err
	}
	return unreachable(err)
}

// singleNode checks that a node reached through a single-node URL is one.
func singleNode(ctx context.Context, client redis.UniversalClient) error {
	info, err := client.Info(ctx, "server").Result()
	if err != nil {
		return err
	}
	mode := "standalone"
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_mode:"); ok {
			mode = v
		}
	}
	opts := client.(*redis.Client).Options()
	switch mode {
	case "cluster":
		return &queue.MisconfiguredError{Broker: "redis", Addr: opts.Addr,
			Reason: "Redis is a Cluster node, but the URL names a single node: give the cluster's URL (redis+cluster://host:port, see docs/brokers.md)"}
	case "sentinel":
		return &queue.MisconfiguredError{Broker: "redis", Addr: opts.Addr,
			Reason: "Redis is a Sentinel, but the URL names a data node: give a Sentinel URL (redis+sentinel://host:port/0?master_name=..., see docs/brokers.md)"}
	}
	return nil
}

func isMisconfigured(err error) bool {
	var m *queue.MisconfiguredError
	return errors.As(err, &m)
}

func dialTimeout(o *options) time.Duration {
	switch o.topology {
	case Sentinel:
		return o.failover.DialTimeout
	case Cluster:
		return o.cluster.DialTimeout
	default:
		return o.single.DialTimeout
	}
}
