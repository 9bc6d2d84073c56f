package redistest_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/testsupport/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// The cluster serves every slot on three masters: keys of every master's
// slots are written through a cluster client, and a plain client of one
// master is sent elsewhere (MOVED) for some of them.
func TestClusterServesEverySlot(t *testing.T) {
	c := redistest.Cluster(t)
	if len(c.Addrs) != 3 {
		t.Fatalf("%d masters", len(c.Addrs))
	}
	opts, err := redis.ParseClusterURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClusterClient(opts)
	defer client.Close()
	ctx := context.Background()
	node := redis.NewClient(&redis.Options{Addr: c.Addrs[0]})
	defer node.Close()
	moved := 0
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		if err := client.Set(ctx, "redistest:"+k, k, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if _, ok := redis.IsMovedError(node.Get(ctx, "redistest:"+k).Err()); ok {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("every key on the first master: the slots are not spread")
	}
}

// The Sentinel hands out the primary, which takes writes.
func TestSentinelNamesThePrimary(t *testing.T) {
	s := redistest.Sentinel(t)
	client := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.MasterName, SentinelAddrs: []string{s.SentinelAddr}})
	defer client.Close()
	if err := client.Set(context.Background(), "redistest:k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
}
