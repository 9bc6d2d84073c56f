package work

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/bench/storm"
)

// runThroughput queues cfg.Jobs verifications of distinct shops (no
// shop's pace binds), then starts the worker and measures it until the
// last ends; with --river-peer, River doing the same work beside it (the
// ratios of the two are this repetition's); then the same with one slot
// and cfg.BeforeJobs jobs.
func runThroughput(ctx context.Context, r *runner, rep int) ([]figure, error) {
	slots := app.DefaultConfig().WorkConcurrency
	once := func() ([]figure, float64, error) {
		return r.throughput(ctx, fmt.Sprintf("throughput-%d", rep), slots, r.cfg.Jobs)
	}
	var figs []figure
	var err error
	if r.cfg.RiverPeer == "" {
		figs, _, err = once()
	} else {
		figs, err = r.besideRiver(ctx, rep, slots, once)
	}
	if err != nil || r.cfg.BeforeJobs == 0 {
		return figs, err
	}
	before, _, err := r.throughput(ctx, fmt.Sprintf("throughput-1slot-%d", rep), 1, r.cfg.BeforeJobs)
	return append(figs, before...), err
}

// besideRiver runs once's run and River's, River first in even
// repetitions (so that neither always runs second, on a machine the other
// just left), and adds their ratios.
func (r *runner) besideRiver(ctx context.Context, rep, slots int, once func() ([]figure, float64, error)) ([]figure, error) {
	river := func() ([]figure, float64, error) {
		return r.riverThroughput(ctx, fmt.Sprintf("throughput-river-%d", rep), slots, r.cfg.Jobs)
	}
	riverFirst := rep%2 == 0
	first, second := once, river
	if riverFirst {
		first, second = river, once
	}
	figs, rateA, err := first()
	if err != nil {
		return figs, err
	}
	more, rateB, err := second()
	figs = append(figs, more...)
	if err != nil {
		return figs, err
	}
	onceRate, riverRate := rateA, rateB
	if riverFirst {
		onceRate, riverRate = rateB, rateA
	}
	return append(figs, peerRatios(figs, onceRate, riverRate)...), nil
}

// peerRatios are once's jobs/s and CPU per job over River's, in one
// repetition (figs holds both runs' rows).
func peerRatios(figs []figure, onceRate, riverRate float64) []figure {
	const scenario = "throughput, once ÷ River (same repetition)"
	perJob := func(scenario, name string) float64 {
		for _, f := range figs {
			if f.scenario == scenario && f.name == name {
				return f.value
			}
		}
		return 0
	}
	once := fmt.Sprintf("throughput, %d slots", app.DefaultConfig().WorkConcurrency)
	out := []figure{{scenario, "jobs/s", times, ratio(onceRate, riverRate), "≥ 1.2× (issue 42)"}}
	for _, p := range []string{"work", "postgres", "sim"} {
		name := "CPU per job: " + p
		out = append(out, figure{scenario, name, times, ratio(perJob(once, name), perJob(riverScenario, name)), ""})
	}
	return out
}

func (r *runner) throughput(ctx context.Context, label string, slots, n int) (figs []figure, rate float64, err error) {
	name := fmt.Sprintf("throughput, %d slots", slots)
	err = r.in(ctx, label, r.latencyFlag(), func(st *stack) error {
		fmt.Fprintf(r.progress, "   queueing %d jobs\n", n)
		if err := createStores(ctx, st.api, n, func(i int) store { return store{"shopify", fmt.Sprintf("t%d", i)} }); err != nil {
			return err
		}
		if err := analyzed(ctx, st.svc.Super(), r.cfg.Timeout); err != nil {
			return err
		}
		stmts, err := r.startStatements(ctx, st.svc.Super())
		if err != nil {
			return err
		}
		if r.cfg.ProfileDir != "" {
			st.workEnv = profileEnv(st.workEnv)
		}
		cpuFrom, err := readCPUTimes()
		if err != nil {
			return err
		}
		procsFrom, err := cpuOf(ctx, st.svc)
		if err != nil {
			return err
		}
		if err := st.startWork(slots); err != nil {
			return err
		}
		profiled := func() error { return nil }
		if r.cfg.ProfileDir != "" {
			profiled = profileWork(ctx, st.metrics[0], r.cfg.ProfileSeconds, filepath.Join(r.cfg.ProfileDir, label+"-work.pprof"))
		}
		sampler := samplePeak(st.metrics[0])
		err = waitEnded(ctx, st, r.progress, r.cfg.Timeout, n, "true")
		admitted := sampler.peak()
		if err != nil {
			return err
		}
		cpuTo, err := readCPUTimes()
		if err != nil {
			return err
		}
		procsTo, err := cpuOf(ctx, st.svc)
		if err != nil {
			return err
		}
		if err := stmts.write(ctx, st.svc.Super(), label, n); err != nil {
			return err
		}
		if err := profiled(); err != nil {
			return err
		}
		if r.cfg.ProfileDir != "" {
			if err := profileMutex(ctx, st.metrics[0], filepath.Join(r.cfg.ProfileDir, label+"-work-mutex.pprof")); err != nil {
				return err
			}
			if err := profileAllocs(ctx, st.metrics[0], filepath.Join(r.cfg.ProfileDir, label+"-work-allocs.pprof")); err != nil {
				return err
			}
		}
		calls, err := peakCalls(ctx, st.sim)
		if err != nil {
			return err
		}
		cpu := procsTo["work"]
		sp, err := spanOf(ctx, st.svc.Super(), "true")
		if err != nil {
			return err
		}
		spent, err := attemptsOf(ctx, st.svc.Super(), "%")
		if err != nil {
			return err
		}
		parked, err := parks(st)
		if err != nil {
			return err
		}
		rate = jobsPerSecond(n, sp.first, sp.last, r.cfg.Latency)
		slotCap := slotLimit(slots, r.cfg.Latency)
		cpuCap := cpuLimit(runtime.NumCPU(), cpu, n)
		machineCPU := machineCPU(cpuFrom, cpuTo)
		machineCap := cpuLimit(runtime.NumCPU(), machineCPU, n)
		figs = []figure{
			{name, "jobs/s (first start → last end)", perSecond, rate, ""},
			{name, "slots ÷ latency", perSecond, slotCap, ""},
			{name, "CPU limit (cores ÷ worker CPU per job)", perSecond, cpuCap, ""},
			{name, "worker CPU per job", cpuMillis, cpu.Seconds() * 1000 / float64(n), ""},
			{name, "jobs/s ÷ min(limits)", times, ratio(rate, min(slotCap, cpuCap)), "≥ 0.8× (or ≥ 200/s)"},
			{name, "machine CPU per job (every process, other sessions' too)", cpuMillis, machineCPU.Seconds() * 1000 / float64(n), ""},
			{name, "machine CPU limit (cores ÷ machine CPU per job)", perSecond, machineCap, ""},
			{name, "jobs/s ÷ min(slots ÷ latency, machine CPU limit)", times, ratio(rate, min(slotCap, machineCap)), "≥ 0.8×"},
		}
		figs = append(figs, cpuShares(name, []string{"work", "postgres", "sim", "serve", "dispatch"}, procsFrom, procsTo, machineCPU, n)...)
		figs = append(figs, []figure{
			{name, "peak platform calls at once (the simulator's spans)", count, float64(calls), fmt.Sprintf("≤ %d", slots)},
			{name, "peak " + inFlightMetric + " (sampled; counts jobs waiting for a slot too)", count, admitted, ""},
			{name, "machine CPU busy, worker start → last end (/proc/stat)", percent, cpuTo.busySince(cpuFrom) * 100, ""},
			{name, "jobs failed", count, float64(sp.failed), "0"},
			{name, "jobs' own attempts spent (sum, job_attempts)", count, float64(spent.jobSum), "0"},
			{name, "dead letters", count, float64(spent.deadLetters), "0"},
			{name, "jobs parked to wait", count, parked, "0"},
		}...)
		return nil
	})
	return figs, rate, err
}

// cpuOf is the CPU time each of the run's processes spent so far: the
// processes it started by name and PostgreSQL's server as "postgres".
func cpuOf(ctx context.Context, svc *storm.Service) (map[string]time.Duration, error) {
	cpu, err := svc.ProcessesCPU()
	if err != nil {
		return nil, err
	}
	cpu["postgres"], err = svc.PostgresCPU(ctx)
	return cpu, err
}

// cpuShares are the CPU per job each of the processes names spent between
// from and to, and the rest of the machine's (other sessions', Redis, the
// bench).
func cpuShares(scenario string, names []string, from, to map[string]time.Duration, machine time.Duration, n int) []figure {
	var figs []figure
	rest := machine
	for _, name := range names {
		d := to[name] - from[name]
		rest -= d
		figs = append(figs, figure{scenario, "CPU per job: " + name, cpuMillis, d.Seconds() * 1000 / float64(n), ""})
	}
	return append(figs, figure{scenario, "CPU per job: the rest of the machine", cpuMillis, rest.Seconds() * 1000 / float64(n), ""})
}
