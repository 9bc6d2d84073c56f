package storm

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/oncehq/once/app"
)

// httpRatios are the ratios the write path's targets are about: each
// variant against the one it is compared with, per repetition.
var httpRatios = map[string]struct {
	against string
	target  float64
}{
	variantPlain:      {variantPgbench, 0.35},
	variantIdempotent: {variantPlain, 0.5}, // issue 42 (issue 9 asked 0.75)
	variantReplay:     {variantIdempotent, 2},
	// No target: what the operation, the event and the sealing add to an
	// idempotent create.
	variantStore: {variantIdempotent, 0},
	// No target: what the database work alone allows the idempotent ÷
	// plain ratio to be.
	variantPgbenchIdempotent:        {variantPgbench, 0},
	variantPgbenchRecordOnce:        {variantPgbench, 0},
	variantPgbenchClaimThenComplete: {variantPgbench, 0},
	// What the relay costs a write, in the same run.
	variantPlain + ", relay on":      {variantPlain, 0.9},
	variantIdempotent + ", relay on": {variantIdempotent, 0.9},
	variantStore + ", relay on":      {variantStore, 0.9},
}

// writeHTTPTable prints one row per connection count and variant: the
// median of the repetitions with the least and the most.
func writeHTTPTable(w io.Writer, cfg HTTPConfig, cells []httpCell) {
	fmt.Fprintln(w, "| conns | variant | requests/s | service CPU per request | clients' CPU per request | PostgreSQL CPU per request | ratio (per repetition) | CPU ratio (per repetition) | target |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---|---|---|")
	for _, conns := range cfg.Conns {
		for _, variant := range variantsOf(cfg) {
			runs := cellsOf(cells, variant, conns)
			if len(runs) == 0 {
				continue
			}
			rate := spreadOfFloats(runs, func(c httpCell) float64 { return c.PerSecond }).Format(perSecond)
			cpu, clientCPU, pgCPU, ratio, cpuRatio, target := "–", "–", "–", "–", "–", "–"
			if !isPgbench(variant) {
				cpu = spreadOfDurations(runs, func(c httpCell) time.Duration { return c.CPUPerRequest }).Format(microseconds)
				clientCPU = spreadOfDurations(runs, func(c httpCell) time.Duration { return c.ClientCPUPerRequest }).Format(microseconds)
				pgCPU = spreadOfDurations(runs, func(c httpCell) time.Duration { return c.PostgresCPUPerRequest }).Format(microseconds)
			}
			if r, ok := httpRatios[variant]; ok {
				ratio = ratioSpread(cells, variant, r.against, conns).Format(times) + " " + r.against
				if !isPgbench(variant) && !isPgbench(r.against) {
					cpuRatio = cpuRatioSpread(cells, variant, r.against, conns).Format(times)
				}
				if r.target > 0 {
					target = fmt.Sprintf("≥ %s", times(r.target))
				}
				if variant == variantPlain {
					target += ", ≤ 250 µs CPU"
				}
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", conns, variant, rate, cpu, clientCPU, pgCPU, ratio, cpuRatio, target)
		}
	}
}

// cellsOf are the repetitions of one variant at one connection count.
func cellsOf(cells []httpCell, variant string, conns int) []httpCell {
	var out []httpCell
	for _, c := range cells {
		if c.Variant == variant && c.Conns == conns {
			out = append(out, c)
		}
	}
	return out
}

// ratioSpread is variant ÷ against within each repetition (the cells come
// in repetition order, one of each per repetition).
func ratioSpread(cells []httpCell, variant, against string, conns int) spread {
	a, b := cellsOf(cells, variant, conns), cellsOf(cells, against, conns)
	var ratios []float64
	for i := range min(len(a), len(b)) {
		if b[i].PerSecond > 0 {
			ratios = append(ratios, a[i].PerSecond/b[i].PerSecond)
		}
	}
	return spreadOf(ratios)
}

// cpuRatioSpread is, within each repetition, against's CPU per request
// (the service's, the clients' and PostgreSQL's) ÷ variant's: the ratio of
// their rates on cores these three saturate, which the other load of a
// shared machine moves less than the rates themselves.
func cpuRatioSpread(cells []httpCell, variant, against string, conns int) spread {
	a, b := cellsOf(cells, variant, conns), cellsOf(cells, against, conns)
	total := func(c httpCell) time.Duration {
		return c.CPUPerRequest + c.ClientCPUPerRequest + c.PostgresCPUPerRequest
	}
	var ratios []float64
	for i := range min(len(a), len(b)) {
		if total(a[i]) > 0 {
			ratios = append(ratios, float64(total(b[i]))/float64(total(a[i])))
		}
	}
	return spreadOf(ratios)
}

func spreadOfFloats[R any](runs []R, figure func(R) float64) spread {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = figure(r)
	}
	return spreadOf(v)
}

func perSecond(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2fk", v/1000)
	}
	return fmt.Sprintf("%.0f", v)
}

func times(v float64) string { return fmt.Sprintf("%.2f×", v) }

func microseconds(seconds float64) string { return fmt.Sprintf("%.0f µs", seconds*1e6) }

func micros(d time.Duration) string { return microseconds(d.Seconds()) }

const httpLegend = "Columns: requests/s are answers with the expected status (201; the replays with Idempotent-Replayed) " +
	"per second of clients sending one request after another over keep-alive connections; pgbench's row is its tps. " +
	"Service CPU is `once serve`'s user+system time (/proc) over the run ÷ its requests; the clients are the bench's own process, " +
	"one goroutine per connection writing prepared requests and reading the answers with no more parsing than the check needs " +
	"(their CPU, measured the same way, is the share of the two cores they took from the service and PostgreSQL). " +
	"PostgreSQL's CPU is its postmaster's and every process it runs then (the service's backends among them), over the run ÷ the requests; " +
	"the CPU ratio is the compared variant's service + clients + PostgreSQL CPU per request ÷ this one's, the rate ratio these three alone would allow. " +
	"The plain create is POST /v1/products (a draft: one row); the idempotent create is POST /v1/media with a fresh key " +
	"(one row and its idempotency record); the replays repeat 256 completed keys of it. Ratios are taken within each " +
	"repetition, then the median (least–most) is shown. The machine is shared with PostgreSQL and the clients: only ratios of one run mean anything."

// describeHTTP is the line that says where and with which settings the
// figures were measured.
func describeHTTP(cfg HTTPConfig, c app.Config, pgVersion string) string {
	conns := strings.Join(strings.Fields(strings.Trim(fmt.Sprint(cfg.Conns), "[]")), ", ")
	return fmt.Sprintf("Machine: %d cores (runtime.NumCPU), %s, PostgreSQL %s (a private cluster, max_connections %d, synchronous_commit %s). "+
		"%d repetitions on a fresh database each; connections %s; each variant %s after a %s warm-up. "+
		"`once serve` with ONCE_DB_MAX_CONNS = the most connections, ONCE_QUEUE=memory, ONCE_AUTH_CACHE_TTL=%s, ONCE_LOG_LEVEL=%s.",
		runtime.NumCPU(), runtime.Version(), pgVersion, cfg.MaxConnections, cfg.SynchronousCommit, cfg.Repetitions, conns,
		cfg.Duration, cfg.Warmup, c.AuthCacheTTL, c.LogLevel)
}
