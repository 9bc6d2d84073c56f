// Command peers drains one backlog with the once Dispatcher, River and the
// watermill-sql Forwarder, one instance each, in interleaved repetitions,
// and prints events/s per variant and the ratios of once to each peer as a
// Markdown table. It is a module of its own so that the product does not
// depend on River or watermill-sql; the Dispatcher is measured through the
// once binary (`once-bench drain --json`).
//
//	go run . --once ../../bin/once-bench
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	defaultSuperuserURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	defaultRedisURL     = "redis://127.0.0.1:6379/0"
)

type config struct {
	params
	Reps     int
	Variants []string
	Once     onceBinary
	River    riverPeer
	Water    watermillPeer
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "river-work" { // once-bench work's River peer (riverwork.go)
		os.Exit(riverWorkMain(os.Args[2:]))
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func parseFlags(args []string) (config, error) {
	var cfg config
	var variants, onceArgs string
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.IntVar(&cfg.Events, "events", 100000, "events in the backlog")
	fs.IntVar(&cfg.Workspaces, "workspaces", 8, "workspaces the backlog is spread over")
	fs.IntVar(&cfg.Reps, "reps", 3, "interleaved repetitions (once, river, watermill, once, ...)")
	fs.StringVar(&variants, "variants", "once,river,watermill", "variants to run, in this order within a repetition")
	fs.StringVar(&cfg.Once.Path, "once", "once-bench", "the once-bench binary (runs `once-bench drain ... --json`)")
	fs.StringVar(&onceArgs, "once-args", "", "extra arguments for `once-bench drain`, space-separated")
	fs.IntVar(&cfg.River.Workers, "river-workers", 200, "River MaxWorkers of the queue")
	fs.DurationVar(&cfg.River.FetchCooldown, "river-fetch-cooldown", 10*time.Millisecond, "River FetchCooldown")
	var riverConns int
	fs.IntVar(&riverConns, "river-max-conns", 0, "River's pgx pool size (0: pgxpool's default, max(4, cores))")
	fs.IntVar(&cfg.Water.Batch, "watermill-batch", 100, "watermill-sql SubscribeBatchSize")
	fs.StringVar(&cfg.SuperuserURL, "superuser-url", envOr("ONCE_TEST_PG_SUPERUSER_DSN", defaultSuperuserURL), "PostgreSQL superuser URL (creates and drops a database per repetition)")
	fs.StringVar(&cfg.RedisURL, "redis-url", envOr("ONCE_REDIS_URL", defaultRedisURL), "Redis the peers publish to (a stream of their own each repetition, deleted after)")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "abort a variant's repetition after this long")
	fs.DurationVar(&cfg.Poll, "poll", 2*time.Millisecond, "how often XLEN is read while a peer drains")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	for _, v := range strings.Split(variants, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if !slices.Contains([]string{"once", "river", "watermill"}, v) {
			return config{}, fmt.Errorf("unknown variant %q (want once, river or watermill)", v)
		}
		cfg.Variants = append(cfg.Variants, v)
	}
	cfg.Once.Args = strings.Fields(onceArgs)
	cfg.River.MaxConns = int32(riverConns)
	cfg.River.RedisURL = cfg.RedisURL
	cfg.Water.RedisURL = cfg.RedisURL
	switch {
	case len(cfg.Variants) == 0:
		return config{}, errors.New("no variant given")
	case cfg.Events < 1 || cfg.Workspaces < 1 || cfg.Reps < 1:
		return config{}, errors.New("events, workspaces and reps must be positive")
	case cfg.River.Workers < 1 || cfg.River.FetchCooldown <= 0 || cfg.Water.Batch < 1 || riverConns < 0:
		return config{}, errors.New("river workers, fetch cooldown and watermill batch must be positive, river max conns not negative")
	case cfg.Timeout <= 0 || cfg.Poll <= 0:
		return config{}, errors.New("timeout and poll must be positive")
	}
	return cfg, nil
}

func (c config) label(variant string) string {
	switch variant {
	case "once":
		return "once, one Dispatcher (`once-bench drain`)"
	case "river":
		return fmt.Sprintf("River %s, InsertManyTx'd jobs, worker XADDs, %d workers, FetchCooldown %s",
			moduleVersion("github.com/riverqueue/river"), c.River.Workers, c.River.FetchCooldown)
	case "watermill":
		return fmt.Sprintf("watermill-sql %s Forwarder → watermill-redisstream %s, batch %d",
			moduleVersion("github.com/ThreeDotsLabs/watermill-sql/v3"),
			moduleVersion("github.com/ThreeDotsLabs/watermill-redisstream"), c.Water.Batch)
	}
	return variant
}

func run(ctx context.Context, cfg config) error {
	m, err := describeMachine(ctx, cfg)
	if err != nil {
		return err
	}
	events := backlog(cfg.Events, cfg.Workspaces)
	rows := make([]variantRow, len(cfg.Variants))
	for i, v := range cfg.Variants {
		rows[i] = variantRow{Name: v, Label: cfg.label(v)}
	}
	for rep := 1; rep <= cfg.Reps; rep++ {
		for i, v := range cfg.Variants {
			var res result
			switch v {
			case "once":
				res, err = cfg.Once.Drain(ctx, cfg.params)
			case "river":
				res, err = drainPeer(ctx, cfg.params, cfg.River, events)
			case "watermill":
				res, err = drainPeer(ctx, cfg.params, cfg.Water, events)
			}
			if err != nil {
				return fmt.Errorf("repetition %d: %w", rep, err)
			}
			fmt.Fprintf(os.Stderr, "rep %d/%d %-9s %d events in %.2f s: %.0f events/s\n",
				rep, cfg.Reps, v, res.Events, res.Seconds, res.EventsPerSec())
			rows[i].EPS = append(rows[i].EPS, res.EventsPerSec())
		}
	}
	report(os.Stdout, m, rows)
	return nil
}

func describeMachine(ctx context.Context, cfg config) (machine, error) {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	conn, err := pgx.Connect(ctx, cfg.SuperuserURL)
	if err != nil {
		return m, fmt.Errorf("PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&m.Postgres); err != nil {
		return m, err
	}
	rdb, err := newRedis(cfg.RedisURL)
	if err != nil {
		return m, err
	}
	defer rdb.Close()
	info, err := rdb.InfoMap(ctx, "server").Result()
	if err != nil {
		return m, fmt.Errorf("Redis: %w", err)
	}
	m.Redis = info["Server"]["redis_version"]
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	m.Parameters = fmt.Sprintf("%d events over %d workspaces, ~%d-byte payloads, %d interleaved repetitions (%s), a fresh database each; a peer's events/s = events ÷ (its start → XLEN shows the whole backlog), once's as its drain bench reports it",
		cfg.Events, cfg.Workspaces, len(events0(cfg)), cfg.Reps, strings.Join(cfg.Variants, ", "))
	return m, nil
}

// events0 is the first payload, to state its size.
func events0(cfg config) []byte {
	return backlog(1, cfg.Workspaces)[0].Payload
}

// moduleVersion is the version of a dependency this binary was built
// with, as go.mod pins it.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown)"
}
