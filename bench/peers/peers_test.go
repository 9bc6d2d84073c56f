package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOnceDrainPicksTheDispatcherLine(t *testing.T) {
	out := strings.Join([]string{
		"loading 100000 events over 8 workspaces ...",
		`{"bench":"drain","variant":"raw","queue":"redis","dispatchers":1,"rep":1,"events":100000,"seconds":5.5,"events_per_sec":18181}`,
		`{"bench":"drain","variant":"once","queue":"redis","dispatchers":3,"rep":1,"events":100000,"seconds":9,"events_per_sec":11111}`,
		`{"bench":"drain","variant":"once","queue":"amqp","dispatchers":1,"rep":1,"events":100000,"seconds":20,"events_per_sec":5000}`,
		`  {"bench":"drain","variant":"once","queue":"redis","dispatchers":1,"rep":1,"events":100000,"seconds":12.5,"events_per_sec":8000}  `,
		"{not json",
		"| variant | events/s |",
	}, "\n")
	got, err := parseOnceDrain(strings.NewReader(out), "redis", 1)
	require.NoError(t, err)
	assert.Equal(t, result{Events: 100000, Seconds: 12.5}, got)
	assert.InDelta(t, 8000, got.EventsPerSec(), 1e-9)
}

func TestParseOnceDrainRefusesMissingOrAmbiguousLines(t *testing.T) {
	line := `{"bench":"drain","variant":"once","queue":"redis","dispatchers":1,"rep":1,"events":100,"seconds":1,"events_per_sec":100}`
	for name, out := range map[string]string{
		"none":       `{"bench":"drain","variant":"raw","queue":"redis","dispatchers":1,"events":100,"seconds":1}`,
		"two":        line + "\n" + line,
		"no seconds": `{"bench":"drain","variant":"once","queue":"redis","dispatchers":1,"events":100,"seconds":0}`,
		"empty":      "",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseOnceDrain(strings.NewReader(out), "redis", 1)
			assert.Error(t, err)
		})
	}
}

func TestSummarize(t *testing.T) {
	assert.Equal(t, spread{Median: 5, Min: 2, Max: 9}, summarize([]float64{9, 2, 5}))
	assert.Equal(t, spread{Median: 4, Min: 1, Max: 10}, summarize([]float64{10, 3, 1, 5}))
	assert.Equal(t, spread{Median: 7, Min: 7, Max: 7}, summarize([]float64{7}))
	assert.Equal(t, spread{}, summarize(nil))
	xs := []float64{3, 1, 2}
	summarize(xs)
	assert.Equal(t, []float64{3, 1, 2}, xs, "the input keeps its order")
}

func TestRatiosArePerRepetition(t *testing.T) {
	once := []float64{9000, 6000, 12000}
	peer := []float64{3000, 3000, 0}
	assert.Equal(t, []float64{3, 2}, ratios(once, peer), "a repetition where the peer drained nothing is left out")
	// The median of the ratios, not the ratio of the medians.
	assert.Equal(t, 1.5, summarize(ratios([]float64{10, 1, 6}, []float64{5, 1, 4})).Median)
}

func TestReportPrintsMediansAndRatios(t *testing.T) {
	var buf bytes.Buffer
	report(&buf, machine{Cores: 2, Go: "go1.26", Postgres: "15", Redis: "7", LoadAvg: "1 1 1", Parameters: "p"}, []variantRow{
		{Name: "once", Label: "once", EPS: []float64{9000, 12000, 6000}},
		{Name: "river", Label: "River", EPS: []float64{6000, 8000, 5000}},
		{Name: "watermill", Label: "watermill", EPS: []float64{3000, 3000, 2000}},
	})
	out := buf.String()
	assert.Contains(t, out, "| once | 9.0k (6.0k–12.0k) | 9.0k, 12.0k, 6.0k |")
	assert.Contains(t, out, "| River | 6.0k (5.0k–8.0k) | 6.0k, 8.0k, 5.0k |")
	assert.Contains(t, out, "| once / river | 1.50× | 1.50× | 1.20× | 1.50× |")
	assert.Contains(t, out, "| once / watermill | 3.00× | 4.00× | 3.00× | 3.00× |")
	assert.Contains(t, out, "machine: 2 cores, go1.26, PostgreSQL 15, Redis 7")
}

// A stand-in for the once-bench binary: checks the contract's arguments and
// prints progress plus the JSON line.
func TestOnceBinaryRunsTheDrainBench(t *testing.T) {
	script := filepath.Join(t.TempDir(), "once-bench")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
[ "$*" = "drain --events 500 --workspaces 4 --dispatchers 1 --queues redis --reps 1 --json --batch 50" ] || { echo "args: $*" >&2; exit 3; }
echo "draining"
echo '{"bench":"drain","variant":"once","queue":"redis","dispatchers":1,"rep":1,"events":500,"seconds":0.25,"events_per_sec":2000}'
`), 0o755))
	prm := params{Events: 500, Workspaces: 4, Timeout: time.Minute}
	got, err := onceBinary{Path: script, Args: []string{"--batch", "50"}}.Drain(context.Background(), prm)
	require.NoError(t, err)
	assert.Equal(t, 2000.0, got.EventsPerSec())

	prm.Events = 600
	_, err = onceBinary{Path: script, Args: []string{"--batch", "50"}}.Drain(context.Background(), prm)
	assert.Error(t, err, "the script refuses other arguments")
}

func TestBacklogIsSpreadOverWorkspaces(t *testing.T) {
	events := backlog(100, 8)
	groups := byWorkspace(events)
	require.Len(t, groups, 8)
	ids := map[string]bool{}
	for _, g := range groups {
		assert.InDelta(t, 12.5, len(g), 0.5)
		for _, e := range g {
			ids[e.ID] = true
			assert.Less(t, len(e.Payload), 100)
		}
	}
	assert.Len(t, ids, 100)
	assert.Equal(t, [][]int{{1, 2}, {3, 4}, {5}}, chunks([]int{1, 2, 3, 4, 5}, 2))
}

func realServices(t *testing.T) params {
	t.Helper()
	prm := params{
		Events:       2000,
		Workspaces:   8,
		SuperuserURL: envOr("ONCE_TEST_PG_SUPERUSER_DSN", defaultSuperuserURL),
		RedisURL:     envOr("ONCE_REDIS_URL", defaultRedisURL),
		Timeout:      2 * time.Minute,
		Poll:         2 * time.Millisecond,
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, prm.SuperuserURL)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable: %v", err)
		}
		t.Skipf("PostgreSQL unreachable: %v", err)
	}
	conn.Close(ctx)
	return prm
}

// The peers against the real PostgreSQL and Redis: each drains every
// event of a small backlog (drainPeer checks the stream holds each id).
func TestPeersDrainTheWholeBacklog(t *testing.T) {
	prm := realServices(t)
	ctx := context.Background()
	events := backlog(prm.Events, prm.Workspaces)
	for _, p := range []peer{
		riverPeer{Workers: 20, FetchCooldown: 10 * time.Millisecond, RedisURL: prm.RedisURL},
		watermillPeer{Batch: 100, RedisURL: prm.RedisURL},
	} {
		t.Run(p.Name(), func(t *testing.T) {
			got, err := drainPeer(ctx, prm, p, events)
			require.NoError(t, err)
			assert.Equal(t, prm.Events, got.Events)
			assert.Positive(t, got.Seconds)
		})
	}
}

// duplicatingPeer publishes the first event twice and never the last: the
// stream reaches the backlog's length without holding every event.
type duplicatingPeer struct {
	redisURL string
	events   *[]event
	stream   *string
}

func (duplicatingPeer) Name() string    { return "dup" }
func (duplicatingPeer) IDField() string { return "id" }

func (p duplicatingPeer) Load(_ context.Context, _, stream string, events []event) error {
	*p.events, *p.stream = events, stream
	return nil
}

func (p duplicatingPeer) Start(ctx context.Context, _, _ string) (func(context.Context) error, error) {
	rdb, err := newRedis(p.redisURL)
	if err != nil {
		return nil, err
	}
	events := *p.events
	pipe := rdb.Pipeline()
	for _, e := range append([]event{events[0]}, events[:len(events)-1]...) {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: *p.stream, Values: []any{"id", e.ID, "payload", e.Payload}})
	}
	_, err = pipe.Exec(ctx)
	return func(context.Context) error { return rdb.Close() }, err
}

func TestDrainPeerCatchesADuplicateStandingInForALostEvent(t *testing.T) {
	prm := realServices(t)
	prm.Events = 50
	_, err := drainPeer(context.Background(), prm, duplicatingPeer{redisURL: prm.RedisURL, events: new([]event), stream: new(string)}, backlog(50, 2))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "49 distinct events of 50")
}

func TestParseFlagsDefaultsAreIssue9s(t *testing.T) {
	cfg, err := parseFlags([]string{"--once", "/bin/once-bench", "--once-args", "--batch 50"})
	require.NoError(t, err)
	assert.Equal(t, []string{"once", "river", "watermill"}, cfg.Variants)
	assert.Equal(t, 100000, cfg.Events)
	assert.Equal(t, 8, cfg.Workspaces)
	assert.Equal(t, 3, cfg.Reps)
	assert.Equal(t, 200, cfg.River.Workers)
	assert.Equal(t, 10*time.Millisecond, cfg.River.FetchCooldown)
	assert.Equal(t, 100, cfg.Water.Batch)
	assert.Equal(t, onceBinary{Path: "/bin/once-bench", Args: []string{"--batch", "50"}}, cfg.Once)

	for _, bad := range [][]string{
		{"--variants", "once,sidekiq"},
		{"--variants", ""},
		{"--reps", "0"},
		{"--river-workers", "0"},
		{"extra"},
	} {
		_, err := parseFlags(bad)
		assert.Error(t, err, "%v", bad)
	}
}
