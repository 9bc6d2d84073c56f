package work

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/oncehq/once/bench/storm"
)

// riverScenario names the River peer's rows.
const riverScenario = "throughput, River peer"

// riverThroughput runs the River peer (bench/peers' `river-work`, built
// by `make bench-work`) on the work once's throughput run does, on a
// fresh database of the same cluster beside the same simulator: n store
// checks queued before the worker starts (its `load`, not measured), then
// one River worker with slots workers, measured as once's worker is, from
// its start to the last job's completion. No serve or dispatch runs.
func (r *runner) riverThroughput(ctx context.Context, label string, slots, n int) (figs []figure, rate float64, err error) {
	err = r.cluster.In(ctx, label, func(svc *storm.Service) error {
		simURL, err := svc.StartSim(ctx, r.latencyFlag()...)
		if err != nil {
			return err
		}
		db := svc.SuperuserURL()
		fmt.Fprintf(r.progress, "   queueing %d River jobs\n", n)
		if out, err := exec.CommandContext(ctx, r.cfg.RiverPeer, "river-work", "load", "--db", db,
			"--jobs", strconv.Itoa(n)).CombinedOutput(); err != nil {
			return fmt.Errorf("%s river-work load: %w: %s", r.cfg.RiverPeer, err, out)
		}
		stmts, err := r.startStatements(ctx, svc.Super())
		if err != nil {
			return err
		}
		cpuFrom, err := readCPUTimes()
		if err != nil {
			return err
		}
		procsFrom, err := cpuOf(ctx, svc)
		if err != nil {
			return err
		}
		// Named "work" so that its CPU is the worker's row.
		w, err := svc.StartProgram("work", r.cfg.RiverPeer, "river-work", "run", "--db", db, "--sim", simURL,
			"--workers", strconv.Itoa(slots))
		if err != nil {
			return err
		}
		if err := waitRiver(ctx, svc.Super(), w, r.cfg.Timeout, n); err != nil {
			return err
		}
		cpuTo, err := readCPUTimes()
		if err != nil {
			return err
		}
		procsTo, err := cpuOf(ctx, svc)
		if err != nil {
			return err
		}
		var first, last sql.NullTime
		var failed int
		if err := svc.Super().QueryRowContext(ctx, `SELECT min(finalized_at) FILTER (WHERE state = 'completed'),
			max(finalized_at) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE state <> 'completed') FROM river_job`).
			Scan(&first, &last, &failed); err != nil {
			return err
		}
		if err := stmts.write(ctx, svc.Super(), label, n); err != nil {
			return err
		}
		rate = jobsPerSecond(n, first.Time, last.Time, r.cfg.Latency)
		figs = append([]figure{{riverScenario, "jobs/s (first completion → last)", perSecond, rate, ""}},
			cpuShares(riverScenario, []string{"work", "postgres", "sim"}, procsFrom, procsTo, machineCPU(cpuFrom, cpuTo), n)...)
		figs = append(figs, figure{riverScenario, "jobs not completed", count, float64(failed), "0"})
		return nil
	})
	return figs, rate, err
}

// waitRiver waits until n River jobs are finalized (completed or not).
func waitRiver(ctx context.Context, super *sql.DB, w *storm.Process, timeout time.Duration, n int) error {
	deadline := time.Now().Add(timeout)
	for {
		var done int
		if err := super.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE finalized_at IS NOT NULL`).Scan(&done); err != nil {
			return err
		}
		switch {
		case done >= n:
			return nil
		case !w.Alive():
			return fmt.Errorf("the River peer ended:\n%s", w.LogTail())
		case time.Now().After(deadline):
			return fmt.Errorf("%d of %d River jobs finalized within %s", done, n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
