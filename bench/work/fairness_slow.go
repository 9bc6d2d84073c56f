package work

import (
	"context"
	"fmt"
	"time"

	"github.com/oncehq/once/bench/storm"
)

// slowPlatform is the platform of workspace H's shops in fairness-slow,
// the one whose calls the simulator answers after cfg.SlowLatency.
const slowPlatform = "tiktok"

// slowFairnessRun is what one variant of fairness-slow measured.
type slowFairnessRun struct {
	fastPerSec float64 // N's jobs/s, the workers' start → its last end
	fast       span
	// firstEnd is from the workers' start to N's first job's end.
	firstEnd time.Duration
	// slowEnded is how many of H's jobs had ended when N's last did.
	slowEnded int
	parks     float64
}

// runSlowFairness measures workspace N's backlog of fast jobs alone, then
// beside workspace H's backlog over cfg.SlowDestinations shops whose
// calls answer, slowly: slots held by calls that succeed open no breaker,
// so only a fair share of the slots keeps N going.
func runSlowFairness(ctx context.Context, r *runner, rep int) ([]figure, error) {
	alone, err := r.slowFairness(ctx, fmt.Sprintf("fairness-slow-alone-%d", rep), false)
	if err != nil {
		return nil, err
	}
	beside, err := r.slowFairness(ctx, fmt.Sprintf("fairness-slow-%d", rep), true)
	if err != nil {
		return nil, err
	}
	slowJobs := r.cfg.SlowDestinations * r.cfg.SlowJobs
	name := fmt.Sprintf("fairness-slow, N's %d jobs (%s each) beside H's %d shops × %d jobs (%s each)",
		r.cfg.FastJobs, r.cfg.Latency, r.cfg.SlowDestinations, r.cfg.SlowJobs, r.cfg.SlowLatency)
	return []figure{
		{name, "N's jobs/s (workers started → its last end), alone", perSecond, alone.fastPerSec, ""},
		{name, "N's jobs/s, beside H", perSecond, beside.fastPerSec, ""},
		{name, "N's jobs/s beside H ÷ alone", times, ratio(beside.fastPerSec, alone.fastPerSec), "≥ 0.5×"},
		{name, "workers started → N's first end, alone", seconds, alone.firstEnd.Seconds(), ""},
		{name, "workers started → N's first end, beside H", seconds, beside.firstEnd.Seconds(), ""},
		{name, "N's jobs failed, beside H", count, float64(beside.fast.failed), "0"},
		{name, "H's jobs ended when N's last did", count, float64(beside.slowEnded), fmt.Sprintf("of %d", slowJobs)},
		{name, "jobs parked to wait, beside H (every worker's)", count, beside.parks, ""},
	}, nil
}

// slowFairness queues H's jobs (when slow) and then N's, starts the
// workers, and measures N's jobs until its last has ended; H's jobs are
// left to the deployment's removal.
func (r *runner) slowFairness(ctx context.Context, label string, slow bool) (run slowFairnessRun, err error) {
	flags := append(r.latencyFlag(), "--platform-latency", slowPlatform+"="+r.cfg.SlowLatency.String())
	// A slow call must answer, not time out: the fault is slots held by
	// calls that succeed.
	shared := []string{"ONCE_SIM_TIMEOUT", (r.cfg.SlowLatency + 30*time.Second).String()}
	err = r.inWith(ctx, label, flags, shared, func(st *stack) error {
		h, err := st.svc.NewWorkspace(ctx, "bench H", loadConns)
		if err != nil {
			return err
		}
		if slow {
			fmt.Fprintf(r.progress, "   queueing H's %d shops × %d jobs\n", r.cfg.SlowDestinations, r.cfg.SlowJobs)
			if err := slowJobs(ctx, h, r.cfg.SlowDestinations, r.cfg.SlowJobs); err != nil {
				return err
			}
		}
		fmt.Fprintf(r.progress, "   queueing N's %d jobs\n", r.cfg.FastJobs)
		if err := createStores(ctx, st.api, r.cfg.FastJobs, func(i int) store { return store{"shopify", fmt.Sprintf("n%d", i)} }); err != nil {
			return err
		}
		// From the workers' start: a wait for a slot before N's first end
		// counts, as it does for N's users.
		started := time.Now()
		if err := st.startWorkersReady(ctx, r.workers, 0); err != nil {
			return err
		}
		n := st.svc.Workspace()
		if err := waitEnded(ctx, st, r.progress, r.cfg.Timeout, r.cfg.FastJobs, "o.workspace_id = $1", n); err != nil {
			return err
		}
		if run.parks, err = parks(st); err != nil {
			return err
		}
		db := st.svc.Super()
		if run.fast, err = spanOf(ctx, db, "o.workspace_id = $1", n); err != nil {
			return err
		}
		run.fastPerSec = ratio(float64(r.cfg.FastJobs), run.fast.last.Sub(started).Seconds())
		run.firstEnd = run.fast.first.Sub(started)
		return db.QueryRowContext(ctx, `SELECT count(*) `+jobsOf+`o.workspace_id = $1 AND o.status IN ('succeeded', 'failed')
			AND o.updated_at <= $2`, h.Workspace, run.fast.last).Scan(&run.slowEnded)
	})
	return run, err
}

// slowJobs connects shops stores of the slow platform in h, each with
// perShop verifications.
func slowJobs(ctx context.Context, h *storm.API, shops, perShop int) error {
	return inParallel(ctx, shops, func(ctx context.Context, i int) error {
		c, err := createStore(ctx, h, store{slowPlatform, fmt.Sprintf("h%d", i)})
		if err != nil {
			return err
		}
		for range perShop - 1 {
			if err := verifyStore(ctx, h, c.store); err != nil {
				return err
			}
		}
		return nil
	})
}
