package work

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
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
}

// Run runs cfg.Scenarios cfg.Reps times, interleaved, each variant on a
// fresh database of a private cluster, and prints the table, the method
// and the machine to out. After a failure the figures measured so far are
// still printed.
func Run(ctx context.Context, cfg Config, out, progress io.Writer) (err error) {
	if err := cfg.validate(); err != nil {
		return err
	}
	cluster, err := storm.OpenCluster(ctx, storm.ClusterConfig{Binary: cfg.Binary, PostgresBin: cfg.PostgresBin,
		MaxConnections: cfg.MaxConnections, RedisURL: cfg.RedisURL}, progress)
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
}

func (r *runner) repetitions(ctx context.Context, res *results) error {
	for rep := 1; rep <= r.cfg.Reps; rep++ {
		for _, name := range scenarios {
			if !r.cfg.runs(name) {
				continue
			}
			figs, err := byName[name](ctx, r, rep)
			if err != nil {
				return fmt.Errorf("%s, repetition %d: %w", name, rep, err)
			}
			res.add(figs...)
		}
	}
	return nil
}

// in runs fn on a fresh deployment with its stack started (the simulator
// with simFlags, serve, dispatch; not the worker).
func (r *runner) in(ctx context.Context, label string, simFlags []string, fn func(*stack) error) error {
	return r.inWith(ctx, label, simFlags, nil, fn)
}

// inWith is in with shared laid over every process's environment (key,
// value pairs).
func (r *runner) inWith(ctx context.Context, label string, simFlags, shared []string, fn func(*stack) error) error {
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

// startWorkReady starts the worker and waits until its ops listener
// answers, so a run's first commit does not wait for its start.
func (st *stack) startWorkReady(ctx context.Context, slots int) error {
	if err := st.startWork(slots); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, st.metrics, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			return nil
		}
		switch {
		case !st.work.Alive():
			return fmt.Errorf("once work ended:\n%s", st.work.LogTail())
		case time.Now().After(deadline):
			return fmt.Errorf("once work did not answer within a minute:\n%s", st.work.LogTail())
		case ctx.Err() != nil:
			return ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// describe says where and with which sizes the figures were measured.
func describe(cfg Config, pgVersion string) string {
	return fmt.Sprintf("Machine: %d cores (runtime.NumCPU), %s, PostgreSQL %s (a private cluster), Redis Streams at %s. "+
		"One once serve (API only), one once dispatch, one once work (ONCE_WORK_CONCURRENCY %d unless said), once sim with every call taking %s. "+
		"Sizes: throughput %d jobs (one slot: %d); fairness %d jobs of workspace A, then %d of B; "+
		"outage: shopify down %s, jobs at %d/s from %s before to %s after; throttle: %d jobs of one shop, bucket %s, other shops at %d/s; "+
		"push: %d operations/s for %s, a second once serve for ?wait=, the receiver in the bench's process (push-outage: %s longer, the receiver down %s from %s on). "+
		"%d repetitions, interleaved; every variant on a fresh database.%s",
		runtime.NumCPU(), runtime.Version(), pgVersion, cfg.RedisURL, app.DefaultConfig().WorkConcurrency, cfg.Latency,
		cfg.Jobs, cfg.BeforeJobs, cfg.Backlog, cfg.Few, cfg.OutageFor, cfg.OutageRate, cfg.OutageLead, cfg.OutageLead,
		cfg.Throttled, cfg.ShopBucket, cfg.OtherRate, cfg.PushRate, cfg.PushFor, cfg.ReceiverDown, cfg.ReceiverDown, cfg.PushFor/2,
		cfg.Reps, workEnvNote(cfg.WorkEnv))
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
