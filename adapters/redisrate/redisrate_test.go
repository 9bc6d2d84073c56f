package redisrate_test

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/adapters/redisrate"
	"github.com/oncehq/once/testsupport/contract"
	"github.com/oncehq/once/testsupport/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// sharedRedis is the machine's Redis; the tests' keys are workspaces of
// their own, removed afterwards.
const sharedRedis = "redis://127.0.0.1:6379/0"

func run(t *testing.T, url string) {
	client, _, err := redisconn.NewClient(redisconn.Config{URL: url, FollowContext: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	contract.RateLimiter(t, redisrate.New(client), func(ws uuid.UUID) {
		// redis_rate's own prefix, before our key.
		if err := client.Del(context.Background(), "rate:"+redisrate.Key(ws)).Err(); err != nil {
			t.Errorf("forget %s: %v", ws, err)
		}
	})
}

func TestContractOnASingleNode(t *testing.T) { run(t, sharedRedis) }

// On a Cluster every workspace is one key, so one slot, whichever master
// serves it.
func TestContractOnACluster(t *testing.T) { run(t, redistest.Cluster(t).URL()) }

// The key names its workspace inside a hash tag, so whatever is kept
// beside it later lands in the same slot.
func TestTheKeyIsHashTaggedByWorkspace(t *testing.T) {
	ws := uuid.New()
	key := redisrate.Key(ws)
	require.Contains(t, key, "{"+ws.String()+"}")
}
