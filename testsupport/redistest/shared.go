package redistest

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue/redisconn"
)

// DeleteKeysLater deletes, when the test ends, every key whose name starts
// with prefix in the Redis url names (on every master of a Cluster): the
// shared Redis is the whole machine's, and a test leaves nothing in it.
// Call it before starting anything that writes under prefix, so that it
// runs after they have stopped (cleanups run last first). prefix must be
// the test's own: everything under it goes.
func DeleteKeysLater(t testing.TB, url, prefix string) {
	t.Helper()
	if prefix == "" {
		t.Fatal("redistest: DeleteKeysLater needs a prefix of the test's own")
	}
	t.Cleanup(func() {
		c, _, err := redisconn.NewClient(redisconn.Config{URL: url})
		if err != nil {
			t.Logf("redistest: delete the test's keys %s*: %v", prefix, err)
			return
		}
		defer c.Close()
		if err := deleteMatching(context.Background(), c, globEscape(prefix)+"*"); err != nil {
			t.Logf("redistest: delete the test's keys %s*: %v", prefix, err)
		}
	})
}

// deleteMatching deletes the keys matching pattern, on every master of a
// Cluster (a SCAN sees one node's keys).
func deleteMatching(ctx context.Context, c redis.UniversalClient, pattern string) error {
	del := func(ctx context.Context, node redis.UniversalClient) error {
		iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if err := node.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	}
	if cluster, ok := c.(*redis.ClusterClient); ok {
		return cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return del(ctx, node) })
	}
	return del(ctx, c)
}

// globEscape quotes the characters SCAN MATCH reads as a pattern.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}
