package redisstream_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/redistest"
)

// groupReader reads a stream as one consumer of a group, acknowledging
// what it is told to.
type groupReader struct {
	c              redis.UniversalClient
	stream, group  string
	delivered      int // entries delivered so far, in stream order
	unacknowledged map[int]bool
}

// read takes the next n entries (or the rest) and acknowledges every one
// but those whose index keep holds.
func (g *groupReader) read(t *testing.T, ids []string, n int, keep ...int) {
	t.Helper()
	ctx := context.Background()
	hold := map[int]bool{}
	for _, i := range keep {
		hold[i] = true
	}
	for n > 0 {
		res, err := g.c.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: g.group, Consumer: "consumer-1", Streams: []string{g.stream, ">"}, Count: int64(min(n, 1000)), Block: -1,
		}).Result()
		if err == redis.Nil {
			return
		}
		require.NoError(t, err)
		msgs := res[0].Messages
		if len(msgs) == 0 {
			return
		}
		var ack []string
		for _, m := range msgs {
			require.Equal(t, ids[g.delivered], m.ID, "group %s reads in stream order", g.group)
			if hold[g.delivered] {
				g.unacknowledged[g.delivered] = true
			} else {
				ack = append(ack, m.ID)
			}
			g.delivered++
		}
		require.NoError(t, g.c.XAck(ctx, g.stream, g.group, ack...).Err())
		n -= len(msgs)
	}
}

// ack acknowledges entries it held back.
func (g *groupReader) ack(t *testing.T, ids []string, indexes ...int) {
	t.Helper()
	for _, i := range indexes {
		require.NoError(t, g.c.XAck(context.Background(), g.stream, g.group, ids[i]).Err())
		delete(g.unacknowledged, i)
	}
}

// After 50,000 handled events the stream holds only what a group still
// needs: group "workers" has read everything but left a few entries
// unacknowledged (a consumer died with them), group "lagging" has read
// less than half. Trimming keeps exactly the entries from the oldest one a
// group needs; every unacknowledged entry stays readable and claimable,
// and every undelivered one is still delivered in order.
//
// On the single node and on a Cluster (behind a Sentinel the primary is a
// single node: nothing more to see, and 50,000 entries take a while).
func TestTrimKeepsEveryEntryAGroupStillNeeds(t *testing.T) {
	t.Run("single", func(t *testing.T) { trimKeepsEveryEntryAGroupStillNeeds(t, redisURL(t)) })
	t.Run("cluster", func(t *testing.T) { trimKeepsEveryEntryAGroupStillNeeds(t, redistest.Cluster(t).URL()) })
}

func trimKeepsEveryEntryAGroupStillNeeds(t *testing.T, url string) {
	stream := queuetest.Prefix() + "trim"
	bare := stream + ".no-group"
	cleanupStreams(t, url, stream, bare)
	c := client(t, url)
	ctx := context.Background()

	const total = 50_000
	ids := make([]string, 0, total)
	for start := 0; start < total; start += 1000 {
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < start+1000; i++ {
				p.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: map[string]any{"n": i, "payload": fmt.Sprintf(`{"task_id":"t-%d"}`, i)}})
			}
			return nil
		})
		require.NoError(t, err)
		for _, cmd := range cmds {
			ids = append(ids, cmd.(*redis.StringCmd).Val())
		}
	}
	require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: bare, Values: map[string]any{"n": 0}}).Err())
	for _, g := range []string{"workers", "lagging"} {
		require.NoError(t, c.XGroupCreate(ctx, stream, g, "0").Err())
	}
	workers := &groupReader{c: c, stream: stream, group: "workers", unacknowledged: map[int]bool{}}
	lagging := &groupReader{c: c, stream: stream, group: "lagging", unacknowledged: map[int]bool{}}
	workers.read(t, ids, total, 30_000, 40_000, 45_000)
	lagging.read(t, ids, 20_000, 15_000)
	require.Equal(t, total, workers.delivered)

	trimmer, err := redisstream.NewTrimmer(redisstream.Config{URL: url}, []string{stream, bare, stream + ".missing"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = trimmer.Close() })

	// The oldest entry needed is lagging's unacknowledged 15,000th.
	removed, err := trimmer.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 15_000, removed)
	requireLen(t, c, stream, total-15_000)
	assert.Equal(t, int64(1), c.XLen(ctx, bare).Val(), "a stream without a group is left alone")
	requireReadable(t, c, stream, "workers", ids, 30_000, 40_000, 45_000)
	requireReadable(t, c, stream, "lagging", ids, 15_000)

	// Trimming again changes nothing; then lagging catches up (its first
	// new entry is the 20,000th: nothing undelivered was lost) and
	// acknowledges everything, and workers all but one.
	removed, err = trimmer.RunOnce(ctx)
	require.NoError(t, err)
	assert.Zero(t, removed)
	lagging.read(t, ids, total)
	require.Equal(t, total, lagging.delivered)
	lagging.ack(t, ids, 15_000)
	workers.ack(t, ids, 30_000, 40_000)
	removed, err = trimmer.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 45_000-15_000, removed)
	requireLen(t, c, stream, total-45_000)
	requireReadable(t, c, stream, "workers", ids, 45_000)

	// Everything acknowledged: nothing is kept.
	workers.ack(t, ids, 45_000)
	_, err = trimmer.RunOnce(ctx)
	require.NoError(t, err)
	requireLen(t, c, stream, 0)

	// A message published now is delivered as usual.
	id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: map[string]any{"n": total}}).Result()
	require.NoError(t, err)
	res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "consumer-1", Streams: []string{stream, ">"}, Count: 10, Block: -1}).Result()
	require.NoError(t, err)
	require.Len(t, res[0].Messages, 1)
	assert.Equal(t, id, res[0].Messages[0].ID)
}

func requireLen(t *testing.T, c redis.UniversalClient, stream string, want int) {
	t.Helper()
	n, err := c.XLen(context.Background(), stream).Result()
	require.NoError(t, err)
	require.Equal(t, int64(want), n, "XLEN %s", stream)
}

// requireReadable checks that each unacknowledged entry is still in the
// stream, with its values, and that another consumer of group can claim
// it, as the subscriber does with a dead consumer's messages.
func requireReadable(t *testing.T, c redis.UniversalClient, stream, group string, ids []string, indexes ...int) {
	t.Helper()
	ctx := context.Background()
	for _, i := range indexes {
		got, err := c.XRange(ctx, stream, ids[i], ids[i]).Result()
		require.NoError(t, err)
		require.Len(t, got, 1, "entry %d (%s) was trimmed while unacknowledged", i, ids[i])
		assert.Equal(t, fmt.Sprint(i), got[0].Values["n"])
		claimed, err := c.XClaim(ctx, &redis.XClaimArgs{Stream: stream, Group: group, Consumer: "rescuer", Messages: []string{ids[i]}}).Result()
		require.NoError(t, err)
		require.Len(t, claimed, 1, "entry %d cannot be claimed", i)
		assert.Equal(t, fmt.Sprintf(`{"task_id":"t-%d"}`, i), claimed[0].Values["payload"])
	}
}
