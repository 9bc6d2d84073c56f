package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// BacklogEventType is the type of the noisy workspace's backlog: a topic
// of its own, so that the consumer reads only the quiet workspaces'
// events.
const BacklogEventType = "bench.backlog"

// FairnessConfig is what `once-bench fairness` measures.
type FairnessConfig struct {
	SteadyConfig
	// Backlog is how many pending events the noisy workspace holds when
	// the quiet ones start producing.
	Backlog int
}

// fairnessVariant is one half of a repetition: the same quiet load with or
// without the noisy workspace's backlog.
type fairnessVariant struct {
	dispatchers int
	backlog     bool
}

func (v fairnessVariant) String() string {
	if v.backlog {
		return fmt.Sprintf("%d Dispatcher(s), with the backlog", v.dispatchers)
	}
	return fmt.Sprintf("%d Dispatcher(s), without a backlog", v.dispatchers)
}

// RunFairness measures what a backlog in one workspace does to the
// commit → publish latency of the others: per repetition and Dispatcher
// count, the quiet workspaces (all but the first) produce at cfg.Rate for
// cfg.Duration, once with cfg.Backlog events pending in the first
// workspace and once without, interleaved; it prints their p50/p99 side
// by side and the ratio of the p99s of the same repetition.
func RunFairness(ctx context.Context, cfg FairnessConfig, out, progress io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.Workspaces < 2 {
		return errors.New("fairness needs at least 2 workspaces: a noisy one and a quiet one")
	}
	if cfg.Rate < 1 || cfg.Duration <= 0 || cfg.ProducerConns < 1 || cfg.Backlog < 1 {
		return errors.New("rate, duration, producer connections and backlog must be positive")
	}
	version, err := serverVersion(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	var variants []fairnessVariant
	for _, k := range cfg.Dispatchers {
		variants = append(variants, fairnessVariant{k, false}, fairnessVariant{k, true})
	}
	all, runErr := repeat(cfg.Common, out, variants, func(rep int, v fairnessVariant) (Measurement, error) {
		fmt.Fprintf(progress, "== rep %d/%d: %s; quiet workspaces commit %d events/s for %s\n", rep, cfg.Reps, v, cfg.Rate, cfg.Duration)
		m, err := inSandbox(ctx, cfg.Common, func(s *sandbox) (Measurement, error) {
			return fairnessOne(ctx, s, cfg, v, rep, progress)
		})
		if err != nil {
			return m, fmt.Errorf("rep %d, %s: %w", rep, v, err)
		}
		fmt.Fprintf(progress, "   quiet: %d events at %.0f/s: p50 %.1f ms, p99 %.1f ms, max %.1f ms; backlog left at the end: %d\n",
			m.Events, m.Rate, m.P50Ms, m.P99Ms, m.MaxMs, m.BacklogLeft)
		return m, nil
	})
	writeReport(out, cfg.Common, all, version, func() { writeFairnessTable(out, cfg, all) }, fmt.Sprintf(
		"%d workspaces: the first holds %d pending events (about 80-byte payloads, preloaded, VACUUM ANALYZE) when the Dispatchers start, or none; "+
			"a producer process commits one event per transaction into the other %d, from %d connections, at %d events/s for %s, "+
			"waking the Dispatchers by LISTEN/NOTIFY as `once serve` does; Dispatchers are processes of their own, batch %d, concurrency %d, publishing to Redis Streams; "+
			"latency is the time a consumer in the bench (XREAD) first saw a quiet event minus its commit time; fresh database per measurement; "+
			"%d repetitions, the two variants interleaved",
		cfg.Workspaces, cfg.Backlog, cfg.Workspaces-1, cfg.ProducerConns, cfg.Rate, cfg.Duration, cfg.Batch, concurrencyOf(cfg.Common), cfg.Reps))
	return runErr
}

func fairnessOne(ctx context.Context, s *sandbox, cfg FairnessConfig, v fairnessVariant, rep int, progress io.Writer) (m Measurement, err error) {
	noisy, quiet := s.workspaces[0], s.workspaces[1:]
	if v.backlog {
		start := time.Now()
		if err := s.preloadInto(ctx, cfg.Backlog, s.workspaces[:1], BacklogEventType); err != nil {
			return m, err
		}
		fmt.Fprintf(progress, "   preloaded %d events into one workspace in %.1fs\n", cfg.Backlog, time.Since(start).Seconds())
	}
	var profile string
	if cfg.ProfileDir != "" {
		profile = filepath.Join(cfg.ProfileDir, fmt.Sprintf("fairness-dispatcher-%d-backlog-%t-rep%d", v.dispatchers, v.backlog, rep))
	}
	lat, rate, err := measureLatency(ctx, s, cfg.SteadyConfig, quiet, v.dispatchers, false, profile, progress)
	if err != nil {
		return m, err
	}
	var left int
	if err := s.super.QueryRowContext(ctx,
		`SELECT count(*) FROM outbox_events WHERE workspace_id = ? AND status <> 'dispatched'`, noisy).Scan(&left); err != nil {
		return m, err
	}
	variant := "quiet"
	if v.backlog {
		variant = "quiet, backlog"
	}
	return Measurement{
		Bench: "fairness", Variant: variant, Queue: PublisherRedis, Dispatchers: v.dispatchers, Rep: rep, Events: len(lat),
		Seconds: cfg.Duration.Seconds(), EventsPerSec: rate, Rate: rate,
		P50Ms: percentile(lat, 0.50), P99Ms: percentile(lat, 0.99), MaxMs: lat[len(lat)-1],
		BacklogLeft: left,
	}, nil
}

// writeFairnessTable prints, per Dispatcher count, the quiet workspaces'
// latencies without and with the backlog, and the ratio of the p99s of
// the same repetition (the target: at most 2×).
func writeFairnessTable(out io.Writer, cfg FairnessConfig, all []Measurement) {
	fmt.Fprintln(out, "| Dispatchers | quiet p50, no backlog | quiet p99, no backlog | quiet p50, backlog | quiet p99, backlog | p99 backlog ÷ no backlog (same rep) | backlog left at the end |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
	for _, k := range cfg.Dispatchers {
		var p50, p99, p50b, p99b, ratios, left []float64
		without := map[int]float64{}
		for _, m := range all {
			if m.Dispatchers == k && m.Variant == "quiet" {
				p50, p99 = append(p50, m.P50Ms), append(p99, m.P99Ms)
				without[m.Rep] = m.P99Ms
			}
		}
		for _, m := range all {
			if m.Dispatchers != k || m.Variant != "quiet, backlog" {
				continue
			}
			p50b, p99b = append(p50b, m.P50Ms), append(p99b, m.P99Ms)
			left = append(left, float64(m.BacklogLeft))
			if w, ok := without[m.Rep]; ok && w > 0 {
				ratios = append(ratios, m.P99Ms/w)
			}
		}
		cell := func(v []float64, unit func(float64) string) string {
			if len(v) == 0 {
				return "–"
			}
			return spreadOf(v).Format(unit)
		}
		ms := func(v float64) string { return fmt.Sprintf("%.1f ms", v) }
		fmt.Fprintf(out, "| %d | %s | %s | %s | %s | %s | %s |\n", k, cell(p50, ms), cell(p99, ms), cell(p50b, ms), cell(p99b, ms),
			cell(ratios, ratio), cell(left, func(v float64) string { return fmt.Sprintf("%.0f", v) }))
	}
}
