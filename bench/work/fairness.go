package work

import (
	"context"
	"fmt"
)

// runFairness measures workspace B's few jobs alone, then behind workspace
// A's backlog (queued before the worker starts, B's jobs created once the
// worker has ended some of A's), on fresh deployments.
func runFairness(ctx context.Context, r *runner, rep int) ([]figure, error) {
	alone, err := r.fairness(ctx, fmt.Sprintf("fairness-alone-%d", rep), 0)
	if err != nil {
		return nil, err
	}
	behind, err := r.fairness(ctx, fmt.Sprintf("fairness-backlog-%d", rep), r.cfg.Backlog)
	if err != nil {
		return nil, err
	}
	const name = "fairness"
	return []figure{
		{name, "B's p50 commit→end, alone", seconds, alone.p50, ""},
		{name, "B's p99 commit→end, alone", seconds, alone.p99, ""},
		{name, fmt.Sprintf("B's p50 commit→end, behind A's %d", r.cfg.Backlog), seconds, behind.p50, ""},
		{name, fmt.Sprintf("B's p99 commit→end, behind A's %d", r.cfg.Backlog), seconds, behind.p99, ""},
		{name, "B's p99 behind ÷ alone", times, ratio(behind.p99, alone.p99), "≤ 2×"},
		{name, "B's p99 commit → its call, alone", seconds, alone.phases.beforeCall.p99, ""},
		{name, "B's p99 commit → its call, behind", seconds, behind.phases.beforeCall.p99, ""},
		{name, "B's p99 call's answer → end, alone", seconds, alone.phases.afterCall.p99, ""},
		{name, "B's p99 call's answer → end, behind", seconds, behind.phases.afterCall.p99, ""},
		{name, "A's jobs ended when B's last ended", count, float64(behind.backlogEnded), fmt.Sprintf("of %d", r.cfg.Backlog)},
		{name, "B's own attempts spent (sum), alone", count, float64(alone.attempts.jobSum), "0"},
		{name, "B's own attempts spent (sum), behind", count, float64(behind.attempts.jobSum), "0"},
		{name, "jobs parked to wait, behind (A's and B's)", count, behind.parks, ""},
	}, nil
}

// fairnessRun is what one variant of fairness measured of B's jobs.
type fairnessRun struct {
	latency
	phases phases
	// backlogEnded is how many of A's jobs had ended when B's last did.
	backlogEnded int
	// attempts are what B's jobs spent.
	attempts attempts
	// parks are the worker's, every workspace's jobs.
	parks float64
}

// fairness queues backlog jobs of the first workspace, starts the worker,
// waits until it has ended one of them, then creates cfg.Few jobs in a
// second workspace and returns their commit→end.
func (r *runner) fairness(ctx context.Context, label string, backlog int) (run fairnessRun, err error) {
	err = r.in(ctx, label, r.latencyFlag(), func(st *stack) error {
		b, err := st.svc.NewWorkspace(ctx, "bench B", loadConns)
		if err != nil {
			return err
		}
		if backlog > 0 {
			fmt.Fprintf(r.progress, "   queueing %d jobs of A\n", backlog)
			if err := createStores(ctx, st.api, backlog, func(i int) store { return store{"shopify", fmt.Sprintf("a%d", i)} }); err != nil {
				return err
			}
		}
		if err := st.startWorkersReady(ctx, r.workers, 0); err != nil {
			return err
		}
		if backlog > 0 { // A's worker is busy once it has ended a job
			if err := waitEnded(ctx, st, r.progress, r.cfg.Timeout, 1, "o.workspace_id = $1", st.svc.Workspace()); err != nil {
				return err
			}
		}
		if err := createStores(ctx, b, r.cfg.Few, func(i int) store { return store{"shopify", fmt.Sprintf("b%d", i)} }); err != nil {
			return err
		}
		if err := waitEnded(ctx, st, r.progress, r.cfg.Timeout, r.cfg.Few, "o.workspace_id = $1", b.Workspace); err != nil {
			return err
		}
		if run.parks, err = parks(st); err != nil {
			return err
		}
		db := st.svc.Super()
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM operations a WHERE a.workspace_id = $1
			AND a.status IN ('succeeded', 'failed') AND a.updated_at <= (SELECT max(updated_at) FROM operations WHERE workspace_id = $2)`,
			st.svc.Workspace(), b.Workspace).Scan(&run.backlogEnded); err != nil {
			return err
		}
		if run.latency, err = latencyOf(ctx, db, "o.workspace_id = $1", b.Workspace); err != nil {
			return err
		}
		if run.attempts, err = attemptsOf(ctx, db, "shopify/b%"); err != nil {
			return err
		}
		run.phases, err = phasesOf(ctx, st, b.Workspace)
		return err
	})
	return run, err
}
