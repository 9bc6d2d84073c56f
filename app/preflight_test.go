package app

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/redistest"
)

// The start-up check passes a broker that answers, and names the one that
// does not (the failures as an operator sees them are in cmd/once).
func TestCheckBroker(t *testing.T) {
	redisURL := cmp.Or(os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0")
	amqpURL := cmp.Or(os.Getenv("AMQP_URL"), "amqp://guest:guest@127.0.0.1:5672/")
	for name, c := range map[string]struct {
		queue, redis, amqp string
	}{
		"redis": {QueueRedis, redisURL, ""},
		"amqp":  {QueueAMQP, "", amqpURL},
	} {
		t.Run(name, func(t *testing.T) {
			u, err := url.Parse(cmp.Or(c.redis, c.amqp))
			if err != nil {
				t.Fatal(err)
			}
			queuetest.RequireBroker(t, name, u.Host)
			cfg := DefaultConfig()
			cfg.Queue, cfg.RedisURL, cfg.AMQPURL = c.queue, c.redis, c.amqp
			if err := CheckBroker(context.Background(), cfg.ProcessConfig, cfg.QueueConfig); err != nil {
				t.Fatalf("a live broker: %v", err)
			}

			u.Host = "127.0.0.1:1" // nothing listens there
			cfg.RedisURL, cfg.AMQPURL = u.String(), u.String()
			err = CheckBroker(context.Background(), cfg.ProcessConfig, cfg.QueueConfig)
			var unreachable *queue.UnreachableError
			if !errors.As(err, &unreachable) || unreachable.Addr != "127.0.0.1:1" {
				t.Fatalf("want a *queue.UnreachableError at 127.0.0.1:1, got %v", err)
			}

			// Nothing to check in a process without a Dispatcher or workers.
			cfg.Dispatcher, cfg.Worker = false, false
			if err := CheckBroker(context.Background(), cfg.ProcessConfig, cfg.QueueConfig); err != nil {
				t.Fatalf("checked a broker the process does not use: %v", err)
			}
		})
	}
}

// A Redis Cluster node reached through a single-node URL fails the
// start-up check (and /readyz) as a misconfiguration, saying what to
// change; the cluster's URL passes.
func TestCheckBrokerTellsAClusterNodeReachedAsASingleNode(t *testing.T) {
	cluster := redistest.Cluster(t)
	cfg := DefaultConfig()
	cfg.Queue, cfg.RedisURL = QueueRedis, cluster.NodeURL()
	err := CheckBroker(context.Background(), cfg.ProcessConfig, cfg.QueueConfig)
	var misconfigured *queue.MisconfiguredError
	if !errors.As(err, &misconfigured) || !strings.Contains(err.Error(), "redis+cluster://") {
		t.Fatalf("want a *queue.MisconfiguredError naming the cluster URL form, got %v", err)
	}
	cfg.RedisURL = cluster.URL()
	if err := CheckBroker(context.Background(), cfg.ProcessConfig, cfg.QueueConfig); err != nil {
		t.Fatalf("the cluster's URL: %v", err)
	}
}
