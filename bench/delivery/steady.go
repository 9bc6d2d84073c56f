package delivery

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	wmredis "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// RunSteady measures commit → publish latency at a steady rate, every
// Dispatcher count once per repetition, interleaved.
func RunSteady(ctx context.Context, cfg SteadyConfig, out, progress io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.Rate < 1 || cfg.Duration <= 0 || cfg.ProducerConns < 1 {
		return errors.New("rate, duration and producer connections must be positive")
	}
	for _, p := range cfg.Paths {
		if p != PathDispatcher && p != PathRelay {
			return fmt.Errorf("path %q: want %s or %s", p, PathDispatcher, PathRelay)
		}
	}
	version, err := serverVersion(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	var variants []steadyVariant
	for _, path := range cfg.Paths {
		for _, k := range cfg.Dispatchers {
			variants = append(variants, steadyVariant{path, k})
		}
	}
	all, runErr := repeat(cfg.Common, out, variants, func(rep int, v steadyVariant) (Measurement, error) {
		fmt.Fprintf(progress, "== rep %d/%d: %d events/s for %s, path %s, %d Dispatcher(s) → redis\n", rep, cfg.Reps, cfg.Rate, cfg.Duration, v.path, v.dispatchers)
		m, err := inSandbox(ctx, cfg.Common, func(s *sandbox) (Measurement, error) {
			return steadyOne(ctx, s, cfg, v, rep, progress)
		})
		if err != nil {
			return m, fmt.Errorf("rep %d, %s, %d dispatcher(s): %w", rep, v.path, v.dispatchers, err)
		}
		fmt.Fprintf(progress, "   %d events at %.0f/s: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", m.Events, m.Rate, m.P50Ms, m.P99Ms, m.MaxMs)
		return m, nil
	})
	if !cfg.JSON && len(all) > 0 {
		fmt.Fprintln(out, "| path | Dispatchers | achieved commit rate | p50 | p99 | max |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|")
		for _, v := range variants {
			var rate, p50, p99, mx []float64
			for _, m := range all {
				if m.Variant == v.path && m.Dispatchers == v.dispatchers {
					rate, p50, p99, mx = append(rate, m.Rate), append(p50, m.P50Ms), append(p99, m.P99Ms), append(mx, m.MaxMs)
				}
			}
			if len(rate) == 0 {
				continue
			}
			fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %s |\n", v.path, v.dispatchers,
				spreadOf(rate).Format(func(v float64) string { return fmt.Sprintf("%.0f/s", v) }),
				spreadOf(p50).Format(millis), spreadOf(p99).Format(millis), spreadOf(mx).Format(millis))
		}
		fmt.Fprintln(out)
		fmt.Fprintln(out, machineLine(version, fmt.Sprintf(
			"A producer process commits one event per transaction, from %d connections, at %d events/s for %s over %d workspaces (fresh database per measurement), "+
				"waking the Dispatchers by LISTEN/NOTIFY as `once serve` does; Dispatchers are processes of their own, batch %d, concurrency %d; "+
				"path relay: the producer writes its events held and publishes them itself after each commit (dispatch.Relay, as ONCE_RELAY), the Dispatchers run beside it as the safety net; "+
				"latency is the time a consumer in the bench (XREAD on the stream) first saw the event minus the commit time the producer recorded after COMMIT returned; "+
				"%d repetitions interleaved",
			cfg.ProducerConns, cfg.Rate, cfg.Duration, cfg.Workspaces, cfg.Batch, concurrencyOf(cfg.Common), cfg.Reps)))
	}
	return runErr
}

// steadyVariant is one measurement of a repetition: a path and a number
// of Dispatcher processes.
type steadyVariant struct {
	path        string
	dispatchers int
}

func steadyOne(ctx context.Context, s *sandbox, cfg SteadyConfig, v steadyVariant, rep int, progress io.Writer) (m Measurement, err error) {
	k := v.dispatchers
	var profile string
	if cfg.ProfileDir != "" {
		profile = filepath.Join(cfg.ProfileDir, fmt.Sprintf("steady-%s-dispatcher-%d-rep%d", v.path, k, rep))
	}
	lat, rate, err := measureLatency(ctx, s, cfg, s.workspaces, k, v.path == PathRelay, profile, progress)
	if err != nil {
		return m, err
	}
	return Measurement{
		Bench: "steady", Variant: v.path, Queue: PublisherRedis, Dispatchers: k, Rep: rep, Events: len(lat),
		Seconds: cfg.Duration.Seconds(), EventsPerSec: rate, Rate: rate,
		P50Ms: percentile(lat, 0.50), P99Ms: percentile(lat, 0.99), MaxMs: lat[len(lat)-1],
	}, nil
}

// percentile is the p-quantile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// measureLatency runs k Dispatcher processes publishing to Redis Streams
// and the producer process committing cfg.Rate events per second into
// workspaces for cfg.Duration, and returns the commit → publish latency of
// each committed event in milliseconds, sorted, and the commit rate the
// producer achieved. Whatever else is pending in the sandbox (a backlog)
// is dispatched meanwhile, to topics of its own event type.
func measureLatency(ctx context.Context, s *sandbox, cfg SteadyConfig, workspaces []uuid.UUID, k int, relay bool, profile string, progress io.Writer) ([]float64, float64, error) {
	prefix := "once-bench-" + s.suffix + "."
	brk := newBroker(PublisherRedis, prefix, cfg.Brokers, nil)
	s.cleanups = append(s.cleanups, brk.cleanup)

	children, err := startChildren(ctx, cfg.Common, s, PublisherRedis, prefix, k, make(chan struct{}, 1), profile)
	defer stopChildren(children, nil)
	if err != nil {
		return nil, 0, err
	}
	for _, c := range children {
		if err := c.start(); err != nil {
			return nil, 0, err
		}
	}

	// The consumer: every entry of the stream, and when it was first seen.
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, 0, errors.New("invalid redis URL")
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	var mu sync.Mutex
	seen := map[uuid.UUID]time.Time{}
	cctx, stopConsumer := context.WithCancel(ctx)
	consumed := make(chan error, 1)
	go func() { consumed <- consume(cctx, rdb, queue.Topic(prefix, EventType), &mu, seen) }()
	defer func() {
		stopConsumer()
		<-consumed
	}()

	relayPrefix := ""
	if relay {
		relayPrefix = prefix
	}
	commits, rate, err := runProducer(ctx, cfg, s.db.AppDSN, workspaces, relayPrefix)
	if err != nil {
		return nil, 0, err
	}
	// Wait until every committed event was seen.
	deadline := time.Now().Add(cfg.Timeout)
	for {
		mu.Lock()
		n := 0
		for id := range commits {
			if _, ok := seen[id]; ok {
				n++
			}
		}
		mu.Unlock()
		if n == len(commits) {
			break
		}
		if time.Now().After(deadline) {
			return nil, 0, fmt.Errorf("timed out: %d of %d committed events published", n, len(commits))
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	if _, err := stopChildren(children, progress); err != nil {
		return nil, 0, err
	}
	lat := make([]float64, 0, len(commits))
	mu.Lock()
	for id, at := range commits {
		lat = append(lat, float64(seen[id].Sub(at).Microseconds())/1000)
	}
	mu.Unlock()
	slices.Sort(lat)
	return lat, rate, nil
}

// consume reads stream from the start until ctx ends, noting when each
// message id was first seen.
func consume(ctx context.Context, rdb *redis.Client, stream string, mu *sync.Mutex, seen map[uuid.UUID]time.Time) error {
	last := "0-0"
	for ctx.Err() == nil {
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{stream, last}, Count: 1000, Block: 100 * time.Millisecond}).Result()
		now := time.Now()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		for _, st := range res {
			for _, msg := range st.Messages {
				last = msg.ID
				raw, _ := msg.Values[wmredis.UUIDHeaderKey].(string)
				if id, err := uuid.Parse(raw); err == nil {
					if _, ok := seen[id]; !ok {
						seen[id] = now
					}
				}
			}
		}
		mu.Unlock()
	}
	return nil
}

// runProducer runs the producer process, committing into workspaces, and
// returns each event's commit time and the commit rate it achieved.
// With relayPrefix set, the producer relays its own events to the Redis
// streams under that prefix.
func runProducer(ctx context.Context, cfg SteadyConfig, appDSN string, workspaces []uuid.UUID, relayPrefix string) (map[uuid.UUID]time.Time, float64, error) {
	ws := make([]string, len(workspaces))
	for i, id := range workspaces {
		ws[i] = id.String()
	}
	args := []string{"producer-child", "--app-dsn", appDSN,
		"--workspaces", strings.Join(ws, ","), "--rate", strconv.Itoa(cfg.Rate), "--duration", cfg.Duration.String(),
		"--conns", strconv.Itoa(max(cfg.ProducerConns, 1))}
	if relayPrefix != "" {
		args = append(args, "--relay-redis", cfg.RedisURL, "--relay-prefix", relayPrefix)
	}
	cmd := exec.CommandContext(ctx, cfg.Binary, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("producer process: %w", err)
	}
	commits := map[uuid.UUID]time.Time{}
	var rate float64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "c":
			id, err := uuid.Parse(f[1])
			ns, err2 := strconv.ParseInt(f[2], 10, 64)
			if err == nil && err2 == nil {
				commits[id] = time.Unix(0, ns)
			}
		case len(f) == 2 && f[0] == "rate":
			rate, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	if len(commits) == 0 {
		return nil, 0, errors.New("the producer committed nothing")
	}
	return commits, rate, nil
}

// ProducerConfig is the producer process of steady.
type ProducerConfig struct {
	AppDSN     string
	Workspaces []uuid.UUID
	Rate       int
	Duration   time.Duration
	Conns      int
	// RelayRedisURL, if set, makes the producer relay its own events to
	// the Redis streams under RelayPrefix (dispatch.Relay).
	RelayRedisURL string
	RelayPrefix   string
}

// ParseUUIDs reads a comma-separated list of ids.
func ParseUUIDs(s string) ([]uuid.UUID, error) {
	var out []uuid.UUID
	for _, p := range strings.Split(s, ",") {
		id, err := uuid.Parse(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("workspaces: %w", err)
		}
		out = append(out, id)
	}
	return out, nil
}

// RunProducerChild commits one event per transaction, at cfg.Rate per
// second for cfg.Duration, through the real unit of work with the
// Dispatchers' wake-up (one coalesced NOTIFY after commit), from a few
// connections (cfg.Conns). Slot i is due at start + i/rate; a late slot goes as soon
// as a connection is free. Afterwards it prints "c <id> <commit unix ns>"
// per event (the time COMMIT returned) and "rate <achieved>".
func RunProducerChild(ctx context.Context, cfg ProducerConfig, _ io.Reader, stdout io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pool, err := postgres.OpenPool(ctx, cfg.AppDSN, postgres.Pool{
		MaxConns: cfg.Conns, MaxIdle: cfg.Conns, AcquireTimeout: time.Minute,
	})
	if err != nil {
		return err
	}
	defer pool.Close()
	// Close stops the signal's goroutines and its LISTEN connection.
	signal := postgres.NewSignal(ctx, pool, cfg.AppDSN, log)
	defer signal.Close()
	uow := dispatch.NotifyOnCommit(postgres.NewUnitOfWork(pool, postgres.WithAcquireTimeout(time.Minute)), signal)
	clock := system.NewClock()
	if cfg.RelayRedisURL != "" {
		relay, stopRelay, err := startRelay(cfg, pool, signal, clock, log)
		if err != nil {
			return err
		}
		// After the last commit: what the relay published is marked.
		defer stopRelay()
		uow = relay.UnitOfWork(uow)
	}
	type commit struct {
		id uuid.UUID
		at time.Time
	}
	total := int(float64(cfg.Rate) * cfg.Duration.Seconds())
	commits := make([]commit, total)
	slots := make(chan int, cfg.Rate)
	var wg sync.WaitGroup
	errs := make([]error, cfg.Conns)
	for w := range cfg.Conns {
		wg.Go(func() {
			for i := range slots {
				if errs[w] != nil {
					continue
				}
				ws := cfg.Workspaces[i%len(cfg.Workspaces)]
				id := uuid.Must(uuid.NewV7())
				ev, err := model.NewOutboxEvent(id, ws, EventType, "bench", uuid.New(),
					map[string]any{"n": i, "pad": strings.Repeat("x", payloadPad)}, clock.Now())
				if err == nil {
					err = uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
						return tx.Outbox().Append(ctx, ev)
					})
				}
				if err != nil {
					errs[w] = err
					continue
				}
				commits[i] = commit{id: id, at: time.Now()}
			}
		})
	}
	interval := time.Second / time.Duration(cfg.Rate)
	start := time.Now()
	for i := range total {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		slots <- i
	}
	close(slots)
	wg.Wait()
	took := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	for _, c := range commits {
		fmt.Fprintf(w, "c %s %d\n", c.id, c.at.UnixNano())
	}
	fmt.Fprintf(w, "rate %.1f\n", float64(total)/took.Seconds())
	return nil
}

// startRelay runs a relay as `once serve` does with ONCE_RELAY: publishing
// to Redis Streams through its own connection, marking through the pool.
func startRelay(cfg ProducerConfig, pool *bun.DB, signal ports.DispatchSignal, clock ports.Clock, log *slog.Logger) (*dispatch.Relay, func(), error) {
	pub, err := newBroker(PublisherRedis, cfg.RelayPrefix, Brokers{RedisURL: cfg.RelayRedisURL}, log).newPublisher()
	if err != nil {
		return nil, nil, err
	}
	relay, err := dispatch.NewRelay(dispatch.RelayConfig{Holder: "bench-producer/relay"}, dispatch.RelayDeps{
		Marks:     postgres.NewOutboxRelayMarks(postgres.NewUnitOfWork(pool, postgres.WithAcquireTimeout(time.Minute))),
		Publisher: pub, Signal: signal, Clock: clock, Logger: log,
	})
	if err != nil {
		_ = pub.Close()
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); relay.Run(ctx) }()
	return relay, func() {
		cancel()
		<-done
		_ = pub.Close()
	}, nil
}
