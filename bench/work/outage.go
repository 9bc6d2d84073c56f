package work

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/oncehq/once/domain/destinations"
)

// outageRun is what one run of the outage scenario measured.
type outageRun struct {
	created, succeeded, failed int
	parks                      float64
	shopify, amazon            attempts
	amazonLatency              latency
	// afterBack is from shopify's return to its last job's end;
	// endedAfterBack how many shopify jobs ended after it.
	afterBack      time.Duration
	endedAfterBack int
	// whileDown is the calls that reached shopify while it was down (the
	// simulator answered them 503), and how they fall.
	whileDown int
	downCalls outageCalls
}

// runOutage runs shopify and amazon jobs at a steady rate with shopify
// down in the middle, beside the same load without the outage.
func runOutage(ctx context.Context, r *runner, rep int) ([]figure, error) {
	var calm outageRun
	if r.cfg.OutageCalm {
		var err error
		if calm, err = r.outage(ctx, fmt.Sprintf("outage-none-%d", rep), false); err != nil {
			return nil, err
		}
	}
	down, err := r.outage(ctx, fmt.Sprintf("outage-%d", rep), true)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("outage, shopify down %s", r.cfg.OutageFor)
	breaker := destinations.DefaultConfig().Breaker
	figs := []figure{
		{name, "jobs created", count, float64(down.created), ""},
		{name, "jobs succeeded", count, float64(down.succeeded), "all"},
		{name, "jobs parked to wait (once_worker_jobs_total{outcome=\"waiting\"} + once_worker_job_waits_total)", count, down.parks, ""},
		{name, "jobs failed", count, float64(down.failed), "0"},
		{name, "dead letters", count, float64(down.shopify.deadLetters + down.amazon.deadLetters), "0"},
		{name, "shopify jobs' own attempts spent (sum, job_attempts)", count, float64(down.shopify.jobSum), "0"},
		{name, "shopify jobs' own attempts (max)", count, float64(down.shopify.jobMax), ""},
		{name, "shopify deliveries by the Dispatcher (sum attempt_count)", count, float64(down.shopify.dispatchSum), ""},
		{name, "shopify deliveries by the Dispatcher (max attempt_count)", count, float64(down.shopify.dispatchMax), ""},
		{name, "amazon jobs' own attempts spent (sum)", count, float64(down.amazon.jobSum), "0"},
		{name, "amazon p99 commit→end, shopify down", seconds, down.amazonLatency.p99, ""},
		{name, "calls that reached shopify while down (simulator, every worker's)", count, float64(down.whileDown),
			fmt.Sprintf("≤ %d (one probe per breaker cooldown for the fleet, + 2)", probeBound(r.cfg.OutageFor, breaker))},
		{name, "of them, before the fleet's breaker opened (a marketplace's opens at 2 failures of 2 shops)", count, float64(down.downCalls.opening), "≤ 2"},
		{name, "of them, probes (after it opened)", count, float64(down.downCalls.probes),
			fmt.Sprintf("≤ %d (one per cooldown)", probeBound(r.cfg.OutageFor, breaker)-2)},
		{name, "probes less than half a cooldown after the one before (two in one cooldown)", count, float64(down.downCalls.doubled), "0"},
		{name, "shopify jobs ended after it was back (they waited)", count, float64(down.endedAfterBack), ""},
		{name, "shopify back → its last job's end", seconds, down.afterBack.Seconds(), "≤ 60 s"},
	}
	if r.cfg.OutageCalm {
		figs = append(figs,
			figure{name, "amazon p99 commit→end, no outage", seconds, calm.amazonLatency.p99, ""},
			figure{name, "amazon p99 down ÷ no outage", times, ratio(down.amazonLatency.p99, calm.amazonLatency.p99), "≤ 1.5×"})
	}
	return figs, nil
}

// outage creates jobs alternately for shopify and amazon shops at
// cfg.OutageRate for OutageLead + OutageFor + OutageLead, with shopify
// down (when down) from OutageLead for OutageFor, then waits for every job
// to end and reads what it cost.
func (r *runner) outage(ctx context.Context, label string, down bool) (run outageRun, err error) {
	err = r.in(ctx, label, r.latencyFlag(), func(st *stack) error {
		if err := st.startWorkersReady(ctx, r.workers, 0); err != nil {
			return err
		}
		platforms := []string{"shopify", "amazon"}
		load := r.cfg.OutageLead + r.cfg.OutageFor + r.cfg.OutageLead
		type created struct {
			n   int
			err error
		}
		done := make(chan created, 1)
		go func() {
			n, err := createStoresSteadily(ctx, st.api, r.cfg.OutageRate, load, func(i int) store {
				return store{platforms[i%2], fmt.Sprintf("o%d", i)}
			})
			done <- created{n, err}
		}()
		var back time.Time
		if down {
			var err error
			if back, err = r.takeDown(ctx, st, "shopify"); err != nil {
				<-done
				return err
			}
		}
		c := <-done
		if c.err != nil {
			return c.err
		}
		fmt.Fprintf(r.progress, "   %d jobs created; waiting for them to end\n", c.n)
		if err := waitEnded(ctx, st, r.progress, r.cfg.Timeout, c.n, "true"); err != nil {
			return err
		}
		run.created = c.n
		var err error
		if run.parks, err = parks(st); err != nil {
			return err
		}
		if down {
			spans, err := callsOf(ctx, st.sim, "shop:shopify/")
			if err != nil {
				return err
			}
			var starts []time.Time
			for _, s := range spans {
				if s.Status == http.StatusServiceUnavailable {
					starts = append(starts, s.Start)
				}
			}
			run.whileDown = len(starts)
			run.downCalls = splitOutageCalls(starts, destinations.DefaultConfig().Breaker.Cooldown)
		}
		return r.readOutage(ctx, st, back, &run)
	})
	return run, err
}

// takeDown makes platform answer 503 from cfg.OutageLead on for
// cfg.OutageFor and returns when it came back.
func (r *runner) takeDown(ctx context.Context, st *stack, platform string) (time.Time, error) {
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(r.cfg.OutageLead):
	}
	if err := st.sim.TakeDown(ctx, platform); err != nil {
		return time.Time{}, err
	}
	fmt.Fprintf(r.progress, "   %s down for %s\n", platform, r.cfg.OutageFor)
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(r.cfg.OutageFor):
	}
	if err := st.sim.BringUp(ctx, platform); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

func (r *runner) readOutage(ctx context.Context, st *stack, back time.Time, run *outageRun) error {
	db := st.svc.Super()
	all, err := spanOf(ctx, db, "true")
	if err != nil {
		return err
	}
	run.succeeded, run.failed = all.succeeded, all.failed
	if run.shopify, err = attemptsOf(ctx, db, "shopify/%"); err != nil {
		return err
	}
	if run.amazon, err = attemptsOf(ctx, db, "amazon/%"); err != nil {
		return err
	}
	if run.amazonLatency, err = latencyOf(ctx, db, "s.platform = 'amazon'"); err != nil {
		return err
	}
	if !back.IsZero() {
		shopify, err := spanOf(ctx, db, "s.platform = 'shopify'")
		if err != nil {
			return err
		}
		run.afterBack = shopify.last.Sub(back)
		if err := db.QueryRowContext(ctx, `SELECT count(*) `+jobsOf+`s.platform = 'shopify' AND o.updated_at > $1`, back).
			Scan(&run.endedAfterBack); err != nil {
			return err
		}
	}
	return nil
}
