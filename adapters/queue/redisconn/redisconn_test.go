package redisconn_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// Each URL form names its topology; a URL that names none is refused
// without being echoed (it may hold a password).
func TestURLForms(t *testing.T) {
	for url, want := range map[string]redisconn.Topology{
		"redis://127.0.0.1:6379/0":                                                                       redisconn.Single,
		"rediss://user:secret@redis.example:6380/2?dial_timeout=3s":                                      redisconn.Single,
		"unix:///run/redis.sock?db=1":                                                                    redisconn.Single,
		"redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000":                                    redisconn.Cluster,
		"redis+cluster://10.0.0.1:7000":                                                                  redisconn.Cluster,
		"rediss+cluster://user:secret@10.0.0.1:7000/0?addr=10.0.0.2:7000":                                redisconn.Cluster,
		"redis+sentinel://10.0.0.1:26379/0?master_name=mymaster":                                         redisconn.Sentinel,
		"redis+sentinel://:secret@10.0.0.1:26379?master_name=m&addr=10.0.0.2:26379&sentinel_password=s2": redisconn.Sentinel,
	} {
		got, err := redisconn.TopologyOf(url)
		if assert.NoError(t, err, url) {
			assert.Equal(t, want, got, url)
		}
	}
	for url, why := range map[string]string{
		"http://user:hunter2@127.0.0.1:6379":              "invalid URL scheme",
		"redis://:hunter2@127.0.0.1:6379/0?bogus=1":       "unexpected option",
		"redis+sentinel://:hunter2@127.0.0.1:26379/0":     "needs master_name",
		"redis+cluster://:hunter2@127.0.0.1:7000/3":       "database 0 only",
		"redis://:hunter2@127.0.0.1:7000?addr=nohostport": "addr",
		"redis://:hunter2@127.0.0.1:6379/0\x7f":           "not a URL",
	} {
		_, err := redisconn.TopologyOf(url)
		if assert.Error(t, err, url) {
			assert.True(t, domain.IsCode(err, domain.CodeValidation), "%s: %v", url, err)
			assert.Contains(t, err.Error(), why, url)
			assert.NotContains(t, err.Error(), "hunter2")
		}
	}
}

func sharedRedis(t *testing.T) string {
	queuetest.RequireBroker(t, "Redis", "127.0.0.1:6379")
	return "redis://127.0.0.1:6379/0"
}

// Ping reaches each topology through its URL.
func TestPingEachTopology(t *testing.T) {
	cluster, sentinel := redistest.Cluster(t), redistest.Sentinel(t)
	for name, url := range map[string]string{
		"single":           sharedRedis(t),
		"cluster":          cluster.URL(),
		"cluster one seed": cluster.SeedURL(),
		"sentinel":         sentinel.URL(),
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, redisconn.Ping(context.Background(), redisconn.Config{URL: url}))
			client, _, err := redisconn.NewClient(redisconn.Config{URL: url})
			require.NoError(t, err)
			defer client.Close()
			// Keys of every slot: a cluster client follows the slots.
			for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
				key := "redisconn-test:" + k
				require.NoError(t, client.Set(context.Background(), key, k, time.Minute).Err())
				require.NoError(t, client.Del(context.Background(), key).Err())
			}
		})
	}
}

// A URL of another topology than the Redis it reaches is a
// misconfiguration, said in one line with what to change; a Redis that
// does not answer is unreachable.
func TestPingTellsAMisconfiguration(t *testing.T) {
	cluster, sentinel := redistest.Cluster(t), redistest.Sentinel(t)
	// A user with a password on the private primary, for a wrong one.
	primary := redis.NewClient(&redis.Options{Addr: sentinel.Primary})
	defer primary.Close()
	require.NoError(t, primary.Do(context.Background(), "ACL", "SETUSER", "redisconn-test", "on", ">right", "~*", "+@all").Err())
	for name, c := range map[string]struct{ url, says string }{
		"single-node URL at a cluster node": {cluster.NodeURL(), "Redis is a Cluster node, but the URL names a single node"},
		"single-node URL at a Sentinel":     {"redis://" + sentinel.SentinelAddr + "/0", "Redis is a Sentinel"},
		"cluster URL at a single node":      {"redis+cluster://" + sentinel.Primary, "names a Redis Cluster but Redis is a single node"},
		"Sentinel URL at a data node":       {"redis+sentinel://" + sentinel.Primary + "/0?master_name=" + redistest.MasterName, "not a Sentinel"},
		"unknown master name":               {"redis+sentinel://" + sentinel.SentinelAddr + "/0?master_name=nobody", "monitor no master"},
		"wrong password":                    {"redis://redisconn-test:wrong@" + sentinel.Primary + "/0", "refused the credentials"},
	} {
		t.Run(name, func(t *testing.T) {
			err := redisconn.Ping(context.Background(), redisconn.Config{URL: c.url})
			require.Error(t, err)
			var m *queue.MisconfiguredError
			require.True(t, errors.As(err, &m), "%T %v", err, err)
			assert.ErrorIs(t, err, ports.ErrBrokerMisconfigured)
			assert.Contains(t, err.Error(), c.says)
			assert.NotContains(t, err.Error(), "wrong")
			t.Log(domain.SanitizeError(err))
		})
	}
	err := redisconn.Ping(context.Background(), redisconn.Config{URL: "redis+cluster://127.0.0.1:1", DialTimeout: time.Second})
	var u *queue.UnreachableError
	require.True(t, errors.As(err, &u), "%T %v", err, err)
	assert.True(t, strings.Contains(err.Error(), "refused"), err.Error())
}
