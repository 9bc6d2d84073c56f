package work

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// throttledPlatform is the platform whose whole bucket throttle-platform
// meters: Amazon's SP-API counts quotas per application as well as per
// selling partner.
const throttledPlatform = "amazon"

// platformThrottleRun is what one run of throttle-platform measured.
type platformThrottleRun struct {
	rate       float64 // the platform's calls served per second after its burst
	throttled  int     // calls the simulator answered 429, every shop's
	span       span
	jobsPerSec float64 // the jobs over first commit → last end
	attempts   attempts
	parks      float64
}

// runPlatformThrottle runs cfg.PlatformJobs verifications, each of a shop
// of its own, against a bucket of the whole platform: no shop's own pace
// can keep to it, only one learned for the platform.
func runPlatformThrottle(ctx context.Context, r *runner, rep int) ([]figure, error) {
	b, _ := parseBucket("--platform-bucket", r.cfg.PlatformBucket) // validated
	run, err := r.platformThrottle(ctx, fmt.Sprintf("throttle-platform-%d", rep), b)
	if err != nil {
		return nil, err
	}
	jobs := r.cfg.PlatformJobs
	name := fmt.Sprintf("throttle-platform, %d jobs of %d %s shops, platform bucket %s", jobs, jobs, throttledPlatform, r.cfg.PlatformBucket)
	return []figure{
		{name, "429s answered (simulator)", count, float64(run.throttled), ""},
		{name, "429s answered per job", ratioUnit, float64(run.throttled) / float64(jobs), "≤ 0.2"},
		{name, "calls served/s after the burst", perSecond, run.rate, fmt.Sprintf("quota %g/s", b.leak)},
		{name, "served ÷ quota", times, run.rate / b.leak, "≥ 0.9×"},
		{name, "jobs/s, first commit → last end", perSecond, run.jobsPerSec, atBest(jobs, b)},
		{name, "jobs succeeded", count, float64(run.span.succeeded), fmt.Sprintf("all %d", jobs)},
		{name, "jobs failed", count, float64(run.span.failed), "0"},
		{name, "jobs' own attempts spent (sum)", count, float64(run.attempts.jobSum), "0"},
		{name, "dead letters", count, float64(run.attempts.deadLetters), "0"},
		{name, "jobs parked to wait (every worker's)", count, run.parks, ""},
	}, nil
}

// atBest is the most jobs/s n jobs can have through b (its burst at once,
// then its leak), as a target.
func atBest(n int, b bucket) string {
	d := bucketDuration(n, b)
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf("at best %.1f/s", float64(n)/d.Seconds())
}

// platformThrottle starts the workers, connects cfg.PlatformJobs stores
// of the throttled platform at once (each one verification), waits for
// them to end and reads what the simulator served and refused.
func (r *runner) platformThrottle(ctx context.Context, label string, b bucket) (run platformThrottleRun, err error) {
	flags := append(r.latencyFlag(), "--platform-bucket", throttledPlatform+"="+r.cfg.PlatformBucket)
	err = r.in(ctx, label, flags, func(st *stack) error {
		if err := st.startWorkersReady(ctx, r.workers, 0); err != nil {
			return err
		}
		jobs := r.cfg.PlatformJobs
		if err := createStores(ctx, st.api, jobs, func(i int) store { return store{throttledPlatform, fmt.Sprintf("p%d", i)} }); err != nil {
			return err
		}
		fmt.Fprintf(r.progress, "   %d jobs created; waiting for them to end\n", jobs)
		if err := waitEnded(ctx, st, r.progress, r.cfg.Timeout, jobs, "true"); err != nil {
			return err
		}
		var err error
		if run.parks, err = parks(st); err != nil {
			return err
		}
		db := st.svc.Super()
		if run.span, err = spanOf(ctx, db, "true"); err != nil {
			return err
		}
		var first time.Time
		if err := db.QueryRowContext(ctx, `SELECT min(o.created_at) `+jobsOf+`true`).Scan(&first); err != nil {
			return err
		}
		run.jobsPerSec = ratio(float64(jobs), run.span.last.Sub(first).Seconds())
		if run.attempts, err = attemptsOf(ctx, db, throttledPlatform+"/%"); err != nil {
			return err
		}
		throttles, err := st.sim.Throttles(ctx)
		if err != nil {
			return err
		}
		run.throttled = throttles.PerPlatform[throttledPlatform]
		effects, err := st.sim.PlatformEffects(ctx)
		if err != nil {
			return err
		}
		calls := effects.PerPlatform[throttledPlatform]
		slices.SortFunc(calls, time.Time.Compare)
		run.rate = afterBurst(calls, b)
		return nil
	})
	return run, err
}
