package work

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/model"
)

// hotShop is the throttled seller's shop.
const hotShop = "hot"

// throttleRun is what one run of the throttle scenario measured.
type throttleRun struct {
	hotRate     float64       // the hot shop's calls/s after its burst
	hotDuration time.Duration // its first call to its last
	throttled   int           // 429s the simulator answered the hot shop
	hotFailed   int
	hotDone     int     // its jobs succeeded
	parks       float64 // jobs parked to wait, every shop's
	hot         attempts
	others      latency
}

// runThrottle runs cfg.Throttled jobs of one shop against a per-shop
// bucket while other shops' jobs arrive steadily, beside the same other
// shops' load alone.
func runThrottle(ctx context.Context, r *runner, rep int) ([]figure, error) {
	b, _ := parseBucket("--shop-bucket", r.cfg.ShopBucket) // validated
	alone, err := r.throttle(ctx, fmt.Sprintf("throttle-none-%d", rep), b, false)
	if err != nil {
		return nil, err
	}
	hot, err := r.throttle(ctx, fmt.Sprintf("throttle-%d", rep), b, true)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("throttle, one shop's %d jobs, bucket %s", r.cfg.Throttled, r.cfg.ShopBucket)
	return []figure{
		{name, "throttled shop's calls/s after its burst", perSecond, hot.hotRate, fmt.Sprintf("quota %g/s, ≥ 0.9×", b.leak)},
		{name, "throttled shop's rate ÷ quota", times, hot.hotRate / b.leak, "≥ 0.9×"},
		{name, "throttled shop's first → last call", seconds, hot.hotDuration.Seconds(),
			fmt.Sprintf("at best %.0f s", bucketDuration(r.cfg.Throttled, b).Seconds())},
		{name, "429s answered to it", count, float64(hot.throttled), ""},
		{name, "429s answered to it per job", ratioUnit, float64(hot.throttled) / float64(r.cfg.Throttled), "≤ 0.2"},
		{name, "jobs parked to wait (once_worker_jobs_total{outcome=\"waiting\"} + once_worker_job_waits_total)", count, hot.parks, ""},
		{name, "its jobs succeeded", count, float64(hot.hotDone), fmt.Sprintf("all %d", r.cfg.Throttled)},
		{name, "its jobs failed", count, float64(hot.hotFailed), "0"},
		{name, "its jobs' own attempts spent (sum)", count, float64(hot.hot.jobSum), "0"},
		{name, "its dead letters", count, float64(hot.hot.deadLetters), "0"},
		{name, "other shops' p99 commit→end, alone", seconds, alone.others.p99, ""},
		{name, "other shops' p99 commit→end, beside it", seconds, hot.others.p99, ""},
		{name, "other shops' p99 beside ÷ alone", times, ratio(hot.others.p99, alone.others.p99), "unaffected (≈ 1×)"},
	}, nil
}

// throttle creates other shops' jobs at cfg.OtherRate for as long as the
// hot shop's jobs take at best (and 10 s more), and when hot, the hot
// shop's store and cfg.Throttled − 1 verifications of it at once.
func (r *runner) throttle(ctx context.Context, label string, b bucket, hot bool) (run throttleRun, err error) {
	flags := append(r.latencyFlag(), "--shop-bucket", "shopify="+r.cfg.ShopBucket)
	err = r.in(ctx, label, flags, func(st *stack) error {
		if err := st.startWorkersReady(ctx, r.workers, 0); err != nil {
			return err
		}
		hotJobs := make(chan error, 1)
		if hot {
			go func() { hotJobs <- r.hotJobs(ctx, st) }()
		} else {
			hotJobs <- nil
		}
		load := bucketDuration(r.cfg.Throttled, b) + 10*time.Second
		n, err := createStoresSteadily(ctx, st.api, r.cfg.OtherRate, load, func(i int) store { return store{"shopify", fmt.Sprintf("s%d", i)} })
		if err := <-hotJobs; err != nil {
			return err
		}
		if err != nil {
			return err
		}
		if hot {
			n += r.cfg.Throttled
		}
		fmt.Fprintf(r.progress, "   %d jobs created; waiting for them to end\n", n)
		if err := waitEnded(ctx, st, r.progress, r.cfg.Timeout, n, "true"); err != nil {
			return err
		}
		if run.parks, err = parks(st); err != nil {
			return err
		}
		return r.readThrottle(ctx, st, b, hot, &run)
	})
	return run, err
}

// hotJobs connects the hot shop's store and asks for the rest of its
// verifications at once.
func (r *runner) hotJobs(ctx context.Context, st *stack) error {
	c, err := createStore(ctx, st.api, store{"shopify", hotShop})
	if err != nil {
		return err
	}
	return inParallel(ctx, r.cfg.Throttled-1, func(ctx context.Context, _ int) error { return verifyStore(ctx, st.api, c.store) })
}

func (r *runner) readThrottle(ctx context.Context, st *stack, b bucket, hot bool, run *throttleRun) error {
	db := st.svc.Super()
	var err error
	if run.others, err = latencyOf(ctx, db, "s.external_shop_id <> $1", hotShop); err != nil {
		return err
	}
	if !hot {
		return nil
	}
	hotSpan, err := spanOf(ctx, db, "s.external_shop_id = $1", hotShop)
	if err != nil {
		return err
	}
	run.hotFailed, run.hotDone = hotSpan.failed, hotSpan.succeeded
	if run.hot, err = attemptsOf(ctx, db, "shopify/"+hotShop); err != nil {
		return err
	}
	shop := simhttp.ShopKey(model.Destination{System: "shopify", Account: hotShop})
	throttles, err := st.sim.Throttles(ctx)
	if err != nil {
		return err
	}
	run.throttled = throttles.PerShop[shop]
	effects, err := st.sim.PlatformEffects(ctx)
	if err != nil {
		return err
	}
	calls := effects.PerShop[shop]
	slices.SortFunc(calls, time.Time.Compare)
	run.hotRate = afterBurst(calls, b)
	if len(calls) > 0 {
		run.hotDuration = calls[len(calls)-1].Sub(calls[0])
	}
	return nil
}
