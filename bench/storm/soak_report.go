package storm

import (
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// soakSteadyWindow is the span the steadiness checks look at:
// the last 20 minutes (or every row but the first of a shorter run).
const soakSteadyWindow = 20 * time.Minute

const soakLegend = "Columns: one row per sample, for the window before it. creates/s: POST /v1/stores accepted per second " +
	"(each a store, an operation, an outbox event, an idempotency record and a verification job); failed: answers other " +
	"than 2xx, or none; HTTP p99: the bench's own clock, request to answer; commit→publish p99: from the histogram " +
	"once_dispatch_delivery_latency_seconds of serve (the relay) and dispatch together; claim p99: the Dispatcher's " +
	"once_dispatch_claim_duration_seconds (– : it claimed nothing, the relay had delivered every event); discovery p99: " +
	"once_dispatch_discovery_duration_seconds, every round's search for due workspaces; all interpolated " +
	"within their buckets, so as fine as the buckets (…, 2.5, 5, 10, 25 ms, …); outbox: every partition of outbox_events with " +
	"indexes and TOAST (in brackets outbox_events_live, the queue); idempotency: idempotency_requests likewise; dead: dead " +
	"tuples (pg_stat_user_tables) of the outbox's partitions / idempotency_requests; parts: range partitions of dispatched " +
	"events; removed: events and records the retention removed in the window; RSS and goroutines: serve / dispatch / work " +
	"(process_resident_memory_bytes, go_goroutines); load: the machine's 1-minute load average at the sample; snap: a " +
	"transaction held a snapshot open during the window."

func (r soakRow) progressLine() string {
	return fmt.Sprintf("%5s  %6.0f/s  failed %s  http p99 %s  claim p99 %s  discovery p99 %s  outbox %s (live %s)  idem %s  parts %d  removed %d%s",
		fmtMinutes(r.At), r.Rate, fmtFailed(r.Failed), fmtDur(r.HTTPP99), fmtSeconds(r.ClaimP99), fmtSeconds(r.DiscoveryP99), fmtBytes(r.OutboxBytes),
		fmtBytes(r.LiveBytes), fmtBytes(r.IdempotencyBytes), r.Partitions, r.Removed, failureNote(r.MaintenanceFailure))
}

func failureNote(f string) string {
	if f == "" {
		return ""
	}
	return "  maintenance failed: " + f
}

func writeSoakTable(w io.Writer, rows []soakRow) {
	fmt.Fprintln(w, "| at | snap | creates/s | failed | HTTP p99 | commit→publish p99 | claim p99 | discovery p99 | outbox (live) | idempotency | dead outbox / idem | parts | removed | RSS MB | goroutines | load |")
	fmt.Fprintln(w, "|---:|:-:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
	for _, r := range rows {
		snap := ""
		if r.Snapshot {
			snap = "open"
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %s | %s | %s | %s | %s (%s) | %s | %d / %d | %d | %d | %s | %s | %.1f |\n",
			fmtMinutes(r.At), snap, r.Rate, fmtFailed(r.Failed), fmtDur(r.HTTPP99), fmtSeconds(r.DeliveryP99), fmtSeconds(r.ClaimP99), fmtSeconds(r.DiscoveryP99),
			fmtBytes(r.OutboxBytes), fmtBytes(r.LiveBytes), fmtBytes(r.IdempotencyBytes), r.OutboxDead, r.IdempotencyDead,
			r.Partitions, r.Removed, perProcess(r.RSS, 1<<20), perProcess(r.Goroutines, 1), r.Load1)
	}
}

func perProcess(m map[string]float64, unit float64) string {
	parts := make([]string, 0, len(soakProcesses))
	for _, name := range soakProcesses {
		parts = append(parts, fmt.Sprintf("%.0f", m[name]/unit))
	}
	return strings.Join(parts, " / ")
}

// writeSoakChecks prints the steadiness checks on rows: sizes, latencies
// and memory that stay flat over the window.
func writeSoakChecks(w io.Writer, cfg SoakConfig, rows []soakRow) {
	if len(rows) < 2 {
		fmt.Fprintln(w, "Checks: too few samples.")
		return
	}
	n := min(int(soakSteadyWindow/cfg.SampleEvery), len(rows)-1)
	steady := rows[len(rows)-n:]
	first := rows[0]
	fmt.Fprintf(w, "Checks over the last %d samples (%s to %s):\n\n", n, fmtMinutes(steady[0].At), fmtMinutes(steady[len(steady)-1].At))

	var sizes []float64
	for _, r := range steady {
		sizes = append(sizes, float64(r.OutboxBytes+r.IdempotencyBytes))
	}
	lo, hi, mean := rangeStats(sizes)
	fmt.Fprintf(w, "- outbox + idempotency total size: %s to %s, mean %s: %+.0f %% / %+.0f %% of the mean (target ±20 %%): %s\n",
		fmtBytes(int64(lo)), fmtBytes(int64(hi)), fmtBytes(int64(mean)), 100*(lo/mean-1), 100*(hi/mean-1), passOrFail(lo >= 0.8*mean && hi <= 1.2*mean))

	for _, name := range soakProcesses {
		var rss, gor []float64
		for _, r := range steady {
			rss = append(rss, r.RSS[name])
			gor = append(gor, r.Goroutines[name])
		}
		rd, gd := drift(rss), drift(gor)
		fmt.Fprintf(w, "- %s: RSS %s, drift %+.1f %%; goroutines %s, drift %+.1f %% (drift: Theil–Sen trend over the window, relative to the mean; flat: within ±10 %%): %s\n",
			name, rangeOf(rss, 1<<20, "MB"), 100*rd, rangeOf(gor, 1, ""), 100*gd, passOrFail(math.Abs(rd) <= 0.10 && math.Abs(gd) <= 0.10))
	}

	writeClaimCheck(w, rows, steady)
	writeDiscoveryCheck(w, rows[0], steady)

	if cfg.OpenSnapshot > 0 {
		writeSnapshotChecks(w, rows, first)
	}
}

// writeClaimCheck: the claim p99 of the window within 2× of the first
// sample that claimed. With the relay on, the Dispatcher claims only the
// events whose hold ended unmarked, so some samples have no claim at all;
// those are counted and left out rather than read as fast.
func writeClaimCheck(w io.Writer, rows, steady []soakRow) {
	first := math.NaN()
	for _, r := range rows {
		if !math.IsNaN(r.ClaimP99) {
			first = r.ClaimP99
			break
		}
	}
	worst, without := 0.0, 0
	for _, r := range steady {
		if math.IsNaN(r.ClaimP99) {
			without++
			continue
		}
		worst = max(worst, r.ClaimP99)
	}
	switch {
	case math.IsNaN(first) || without == len(steady):
		fmt.Fprintf(w, "- claim p99: the Dispatcher claimed nothing in the window (every event relayed): n/a\n")
	default:
		fmt.Fprintf(w, "- claim p99: first sample that claimed %s, worst of the window %s (%.1f×; target ≤ 2×; %d of %d samples without a claim): %s\n",
			fmtSeconds(first), fmtSeconds(worst), worst/first, without, len(steady), passOrFail(worst <= 2*first))
	}
}

// writeDiscoveryCheck: every round's discovery, which reads the queue's
// index whether or not anything is due, within 2× of the first sample: the
// queue's reading that the relay leaves the Dispatcher when it claims
// nothing.
func writeDiscoveryCheck(w io.Writer, first soakRow, steady []soakRow) {
	worst := 0.0
	for _, r := range steady {
		worst = max(worst, r.DiscoveryP99)
	}
	fmt.Fprintf(w, "- discovery p99: first sample %s, worst of the window %s (%.1f×; target ≤ 2×): %s\n",
		fmtSeconds(first.DiscoveryP99), fmtSeconds(worst), worst/first.DiscoveryP99, passOrFail(worst <= 2*first.DiscoveryP99))
}

// writeSnapshotChecks: the service kept answering while the snapshot was
// open, and the claim p99 came back within 2× of the first sample within
// two samples of its close.
func writeSnapshotChecks(w io.Writer, rows []soakRow, first soakRow) {
	failed, last := 0, -1
	worst := 0.0
	var rates []float64
	for i, r := range rows {
		if r.Snapshot {
			failed += total(r.Failed)
			last = i
			worst = max(worst, r.ClaimP99)
			rates = append(rates, r.Rate)
		}
	}
	if last < 0 {
		fmt.Fprintln(w, "- open snapshot: never opened")
		return
	}
	lo, _, _ := rangeStats(rates)
	fmt.Fprintf(w, "- while the snapshot was open: %d failed creates, at least %.0f creates/s, claim p99 up to %s: %s\n",
		failed, lo, fmtSeconds(worst), passOrFail(failed == 0))
	recovered := -1
	for i := last + 1; i < len(rows); i++ {
		if rows[i].ClaimP99 <= 2*first.ClaimP99 {
			recovered = i - last
			break
		}
	}
	switch {
	case recovered < 0:
		fmt.Fprintln(w, "- after the snapshot closed: claim p99 did not come back within 2× of the first sample: FAIL")
	default:
		fmt.Fprintf(w, "- after the snapshot closed: claim p99 within 2× of the first sample again in sample %d after the close (target ≤ 2): %s\n",
			recovered, passOrFail(recovered <= 2))
	}
}

// fmtFailed is the count of failures and, if any, their statuses.
func fmtFailed(byStatus map[int]int) string {
	n := total(byStatus)
	if n == 0 {
		return "0"
	}
	parts := make([]string, 0, len(byStatus))
	for _, s := range slices.Sorted(maps.Keys(byStatus)) {
		parts = append(parts, fmt.Sprintf("%s×%d", statusName(s), byStatus[s]))
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, " "))
}

func passOrFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func rangeStats(v []float64) (lo, hi, mean float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi, mean = min(lo, x), max(hi, x), mean+x
	}
	return lo, hi, mean / float64(len(v))
}

// drift is the trend of v across its span, relative to its mean: +0.1
// means it grew by a tenth of the mean across the window. The trend is the
// Theil–Sen slope, the median of the slopes between every two samples, not
// a least-squares fit: a leak moves every pair, while one sample's burst
// (the bench's clients opening connections at once) moves only the pairs
// that hold it, and so cannot fail a window of flat samples alone.
func drift(v []float64) float64 {
	n := len(v)
	if n < 2 {
		return 0
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	var sum float64
	for i, y := range v {
		sum += y
		for j := i + 1; j < n; j++ {
			slopes = append(slopes, (v[j]-y)/float64(j-i))
		}
	}
	mean := sum / float64(n)
	if mean == 0 {
		return 0
	}
	slices.Sort(slopes)
	m := len(slopes) / 2
	median := slopes[m]
	if len(slopes)%2 == 0 {
		median = (slopes[m-1] + slopes[m]) / 2
	}
	return median * float64(n-1) / mean
}

func rangeOf(v []float64, unit float64, suffix string) string {
	lo, hi, _ := rangeStats(v)
	return fmt.Sprintf("%.0f–%.0f%s", lo/unit, hi/unit, suffix)
}

func fmtMinutes(d time.Duration) string { return d.Round(time.Second).String() }

func fmtDur(d time.Duration) string { return fmtSeconds(d.Seconds()) }

func fmtSeconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "–"
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1000)
	default:
		return fmt.Sprintf("%.2f s", s)
	}
}

func fmtBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%d kB", b>>10)
	}
}

// describeSoak says where and how the soak ran.
func describeSoak(cfg SoakConfig, s *soak, pgVersion string) string {
	snap := "no open snapshot"
	if cfg.OpenSnapshot > 0 {
		snap = fmt.Sprintf("a snapshot held open from %s to %s", cfg.OpenSnapshotAt, cfg.OpenSnapshotAt+cfg.OpenSnapshot)
	}
	return fmt.Sprintf("Machine: %d cores, %s, PostgreSQL %s (a private cluster), Redis Streams at %s; processes: once serve "+
		"(API only, ONCE_RELAY=%s), once dispatch, once work and once sim (the platform the worker calls, ONCE_SIM_URL). Capacity measured for %s with 16 clients: %.0f creates/s; load at %.0f %% of it "+
		"(%.0f/s) for %s; %s. Retention (bench-driven, every %s): dispatched events and idempotency records older than %s, "+
		"ONCE_OUTBOX_PARTITION_INTERVAL=%s.",
		runtime.NumCPU(), runtime.Version(), pgVersion, redactedRedis(cfg.RedisURL), relaySetting(cfg.Relay), cfg.Calibrate, s.capacity, cfg.Fraction*100,
		s.rate, cfg.Duration, snap, cfg.CleanupEvery, cfg.Retention, cfg.PartitionWidth)
}
