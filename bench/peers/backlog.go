package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// event is one item of the backlog: the same ids and payloads are loaded
// into each peer's own table, so every variant drains the same thing.
type event struct {
	ID        string
	Workspace string
	Seq       int
	Payload   []byte
}

func bodyOf(e event) eventBody {
	return eventBody{ID: e.ID, WorkspaceID: e.Workspace, Seq: e.Seq}
}

// eventBody is the payload, about 80 bytes of JSON like the outbox's own
// events (ids and a sequence, no more).
type eventBody struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Seq         int    `json:"seq"`
}

// backlog makes n events spread round-robin over workspaces.
func backlog(n, workspaces int) []event {
	out := make([]event, n)
	for i := range out {
		ws := fmt.Sprintf("ws-%02d", i%workspaces+1)
		id := uuid.Must(uuid.NewV7()).String()
		e := event{ID: id, Workspace: ws, Seq: i + 1}
		e.Payload, _ = json.Marshal(bodyOf(e))
		out[i] = e
	}
	return out
}

// byWorkspace groups the backlog the way it was committed: one workspace's
// events together, in order.
func byWorkspace(events []event) [][]event {
	index := map[string]int{}
	var groups [][]event
	for _, e := range events {
		i, ok := index[e.Workspace]
		if !ok {
			i = len(groups)
			index[e.Workspace] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], e)
	}
	return groups
}

// chunks cuts s into pieces of at most size.
func chunks[T any](s []T, size int) [][]T {
	var out [][]T
	for len(s) > size {
		out = append(out, s[:size])
		s = s[size:]
	}
	if len(s) > 0 {
		out = append(out, s)
	}
	return out
}

// scratchDB is a database of one repetition, created by the superuser and
// dropped (with its connections) when the repetition ends.
type scratchDB struct {
	superURL string
	name     string
	URL      string
}

func createScratchDB(ctx context.Context, superURL, prefix string) (*scratchDB, error) {
	name := prefix + "_" + randomSuffix()
	conn, err := pgx.Connect(ctx, superURL)
	if err != nil {
		return nil, fmt.Errorf("connect as superuser: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(superURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	return &scratchDB{superURL: superURL, name: name, URL: u.String()}, nil
}

func (d *scratchDB) Drop(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, d.superURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.name}.Sanitize()+" WITH (FORCE)")
	return err
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newRedis connects to the Redis at url (a redis:// URL).
func newRedis(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	return redis.NewClient(opts), nil
}

// waitForStream polls XLEN until the stream holds want entries and returns
// when that was seen. Every variant is timed by this same poll, so the
// figures are counted alike: the clock stops at the first poll that sees
// the last message.
func waitForStream(ctx context.Context, rdb *redis.Client, stream string, want int64, every time.Duration) (time.Time, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := rdb.XLen(ctx, stream).Result()
		if err != nil && err != redis.Nil {
			return time.Time{}, fmt.Errorf("XLEN %s: %w", stream, err)
		}
		if n >= want {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("stream %s holds %d of %d messages: %w", stream, n, want, ctx.Err())
		case <-t.C:
		}
	}
}

// distinctIDs reads the whole stream and counts the distinct values of
// field, so a duplicate cannot stand in for a message that never came.
func distinctIDs(ctx context.Context, rdb *redis.Client, stream, field string) (distinct, total int, err error) {
	seen := map[string]struct{}{}
	start := "-"
	for {
		msgs, err := rdb.XRangeN(ctx, stream, start, "+", 10000).Result()
		if err != nil {
			return 0, 0, fmt.Errorf("XRANGE %s: %w", stream, err)
		}
		for _, m := range msgs {
			total++
			if v, ok := m.Values[field].(string); ok {
				seen[v] = struct{}{}
			}
		}
		if len(msgs) < 10000 {
			return len(seen), total, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}
