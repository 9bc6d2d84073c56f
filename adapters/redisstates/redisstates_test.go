package redisstates_test

import (
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/adapters/redisstates"
	"github.com/oncehq/once/testsupport/contract"
	"github.com/oncehq/once/testsupport/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// sharedRedis is the machine's Redis; the test's keys are under a prefix
// of its own, removed afterwards.
const sharedRedis = "redis://127.0.0.1:6379/0"

func TestContractOnASingleNode(t *testing.T) {
	prefix := "once-test:" + uuid.NewString() + ":"
	redistest.DeleteKeysLater(t, sharedRedis, prefix)
	client, _, err := redisconn.NewClient(redisconn.Config{URL: sharedRedis, FollowContext: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	contract.DestinationStates(t, redisstates.New(client, prefix))
}
