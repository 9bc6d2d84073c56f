package work

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/bench/storm"
)

// runner is one bench: its configuration, its private cluster, and where
// progress goes.
type runner struct {
	cfg      Config
	cluster  *storm.Cluster
	progress io.Writer
	// workers is how many `once work` the scenario running now starts.
	workers int
}

// Run runs cfg.Scenarios cfg.Reps times, interleaved, each variant on a
// fresh database of a private cluster, and prints the table, the method
// and the machine to out. After a failure the figures measured so far are
// still printed.
func Run(ctx context.Context, cfg Config, out, progress io.Writer) (err error) {
	if err := cfg.validate(); err != nil {
		return err
	}
	var settings []string
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return err
		}
		settings = append(settings, StatementsSettings...)
	}
	cluster, err := storm.OpenCluster(ctx, storm.ClusterConfig{Binary: cfg.Binary, PostgresBin: cfg.PostgresBin,
		MaxConnections: cfg.MaxConnections, RedisURL: cfg.RedisURL, Settings: settings}, progress)
	defer func() { err = cluster.Close(err) }()
	if err != nil {
		return err
	}
	r := &runner{cfg: cfg, cluster: cluster, progress: progress}
	var res results
	err = r.repetitions(ctx, &res)
	res.write(out)
	fmt.Fprintln(out)
	fmt.Fprintln(out, describe(cfg, cluster.Version()))
	return err
}

// scenario is one scenario's run: every variant it compares, in one
// repetition.
type scenario func(ctx context.Context, r *runner, rep int) ([]figure, error)

var byName = map[string]scenario{
	ScenarioThroughput: runThroughput,
	ScenarioFairness:   runFairness,
	ScenarioOutage:     runOutage,
	ScenarioThrottle:   runThrottle,
	ScenarioPush:       runPush,
	ScenarioPushOutage: runPushOutage,

	ScenarioPlatformThrottle: runPlatformThrottle,
	ScenarioSlowFairness:     runSlowFairness,
	ScenarioOrdering:         runOrdering,
}

func (r *runner) repetitions(ctx context.Context, res *results) error {
	for rep := 1; rep <= r.cfg.Reps; rep++ {
		for _, name := range scenarios {
			if !r.cfg.runs(name) {
				continue
			}
			counts := []int{1}
			if slices.Contains(fleetScenarios, name) {
				counts = r.cfg.Workers
			}
			for _, n := range counts {
				r.workers = n
				figs, err := byName[name](ctx, r, rep)
				if err != nil {
					return fmt.Errorf("%s with %s, repetition %d: %w", name, workersName(n), rep, err)
				}
				if len(r.cfg.Workers) > 1 || r.cfg.Workers[0] != 1 {
					for i := range figs {
						figs[i].scenario += ", " + workersName(n)
					}
				}
				res.add(figs...)
			}
		}
	}
	return nil
}

func workersName(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}

// in runs fn on a fresh deployment with its stack started (the simulator
// with simFlags, serve, dispatch; not the worker).
func (r *runner) in(ctx context.Context, label string, simFlags []string, fn func(*stack) error) error {
	return r.inWith(ctx, label, simFlags, nil, fn)
}

// inWith is in with shared laid over every process's environment (key,
// value pairs).
func (r *runner) inWith(ctx context.Context, label string, simFlags, shared []string, fn func(*stack) error) error {
	if r.workers > 1 {
		label += fmt.Sprintf("-w%d", r.workers)
	}
	return r.cluster.In(ctx, label, func(svc *storm.Service) error {
		st, err := startStack(ctx, svc, shared, simFlags...)
		if err != nil {
			return err
		}
		st.workEnv = r.cfg.WorkEnv
		return fn(st)
	})
}

// latencyFlag is the simulator's flag for the bench's call latency.
func (r *runner) latencyFlag() []string { return []string{"--latency", r.cfg.Latency.String()} }

// startWorkReady starts one worker and waits until its ops listener
// answers, so a run's first commit does not wait for its start.
func (st *stack) startWorkReady(ctx context.Context, slots int) error {
	return st.startWorkersReady(ctx, 1, slots)
}

// startWorkersReady starts n workers and waits until each one's ops
// listener answers.
func (st *stack) startWorkersReady(ctx context.Context, n, slots int) error {
	for range n {
		if err := st.startWork(slots); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(time.Minute)
	for i, w := range st.workers {
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, st.metrics[i], nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_ = resp.Body.Close()
				break
			}
			switch {
			case !w.Alive():
				return fmt.Errorf("once work ended:\n%s", w.LogTail())
			case time.Now().After(deadline):
				return fmt.Errorf("once work did not answer within a minute:\n%s", w.LogTail())
			case ctx.Err() != nil:
				return ctx.Err()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// describe says where and with which sizes the figures were measured.
func describe(cfg Config, pgVersion string) string {
	return fmt.Sprintf("Machine: %d cores (runtime.NumCPU), %s, PostgreSQL %s (a private cluster), Redis Streams at %s. "+
		"One once serve (API only), one once dispatch, once work (ONCE_WORK_CONCURRENCY %d each unless said; one unless said below), once sim with every call taking %s. "+
		"Sizes: throughput %d jobs (one slot: %d); fairness %d jobs of workspace A, then %d of B; "+
		"outage: shopify down %s, jobs at %d/s from %s before to %s after; throttle: %d jobs of one shop, bucket %s, other shops at %d/s; "+
		"push: %d operations/s for %s, a second once serve for ?wait=, the receiver in the bench's process (push-outage: %s longer, the receiver down %s from %s on). "+
		"throttle-platform: %d jobs of as many amazon shops, amazon's whole bucket %s; fairness-slow: N's %d jobs beside H's %d tiktok shops × %d jobs answering after %s. "+
		"ordering: %d publications of %d products, each to one of %d shopify stores, a second once dispatch, ONCE_REDIS_CLAIM_IDLE %s, a worker killed -9 every %s and started again. "+
		"Fleet scenarios (fairness, outage, throttle, throttle-platform, fairness-slow, ordering) with %s once work processes, each count in every repetition. "+
		"%d repetitions, interleaved; every variant on a fresh database.%s",
		runtime.NumCPU(), runtime.Version(), pgVersion, cfg.RedisURL, app.DefaultConfig().WorkConcurrency, cfg.Latency,
		cfg.Jobs, cfg.BeforeJobs, cfg.Backlog, cfg.Few, cfg.OutageFor, cfg.OutageRate, cfg.OutageLead, cfg.OutageLead,
		cfg.Throttled, cfg.ShopBucket, cfg.OtherRate, cfg.PushRate, cfg.PushFor, cfg.ReceiverDown, cfg.ReceiverDown, cfg.PushFor/2,
		cfg.PlatformJobs, cfg.PlatformBucket, cfg.FastJobs, cfg.SlowDestinations, cfg.SlowJobs, cfg.SlowLatency,
		cfg.OrderingJobs, cfg.OrderingKeys, cfg.OrderingStores, orderingClaimIdle, cfg.KillEvery, workersList(cfg.Workers),
		cfg.Reps, workEnvNote(cfg.WorkEnv)) + peerNote(cfg)
}

func peerNote(cfg Config) string {
	if cfg.RiverPeer == "" {
		return ""
	}
	return fmt.Sprintf(" River peer (%s river-work): the same %d store checks (read the row, the same once sim over HTTP, "+
		"the outcome and an event row in one transaction; River's batch completer), MaxWorkers %d, a pgx pool of 10 "+
		"(once's ONCE_DB_MAX_CONNS default), as PostgreSQL's superuser (no row-level security), on a fresh database "+
		"beside once's run in each repetition (after it in odd repetitions, before it in even ones); no serve or dispatch.", cfg.RiverPeer, cfg.Jobs, app.DefaultConfig().WorkConcurrency)
}

func workEnvNote(env []string) string {
	if len(env) == 0 {
		return ""
	}
	var pairs []string
	for i := 0; i+1 < len(env); i += 2 {
		pairs = append(pairs, env[i]+"="+env[i+1])
	}
	return " The worker alone with " + strings.Join(pairs, ", ") + "."
}

func workersList(counts []int) string {
	s := make([]string, len(counts))
	for i, n := range counts {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " and ")
}
