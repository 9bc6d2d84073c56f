package delivery

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/oncehq/once/bench/stats"
)

func writeJSON(out io.Writer, m Measurement) {
	b, _ := json.Marshal(m)
	fmt.Fprintln(out, string(b))
}

// spread is one figure over the repetitions.
type spread = stats.Spread

var spreadOf = stats.Of

func kilo(v float64) string  { return fmt.Sprintf("%.1fk", v/1000) }
func ratio(v float64) string { return fmt.Sprintf("%.2f×", v) }
func millis(v float64) string {
	return fmt.Sprintf("%.0f ms", v)
}

// key names a variant in a table.
func key(m Measurement) string {
	switch m.Variant {
	case "raw":
		return fmt.Sprintf("raw claim+mark, %d client(s)", m.Clients)
	case "bare":
		return fmt.Sprintf("bare amqp091 publisher, no database, %d channels", m.Clients)
	}
	return fmt.Sprintf("once → %s, %d Dispatcher(s)", m.Queue, m.Dispatchers)
}

// writeDrainTable prints events/s per variant and, per repetition, the
// ratios the targets are about: each variant over the one-client raw
// limit of the same repetition, and AMQP over Redis.
func writeDrainTable(out io.Writer, cfg DrainConfig, all []Measurement) {
	var order []string
	perKey := map[string][]Measurement{}
	for _, m := range all {
		k := key(m)
		if _, ok := perKey[k]; !ok {
			order = append(order, k)
		}
		perKey[k] = append(perKey[k], m)
	}
	byRep := func(pred func(Measurement) bool) map[int]float64 {
		r := map[int]float64{}
		for _, m := range all {
			if pred(m) {
				r[m.Rep] = m.EventsPerSec
			}
		}
		return r
	}
	raw1 := byRep(func(m Measurement) bool { return m.Variant == "raw" && m.Clients == 1 })
	// The AMQP target: once on RabbitMQ against a bare amqp091
	// publisher of the same messages, the broker's own limit.
	bare := byRep(func(m Measurement) bool { return m.Variant == "bare" })
	fmt.Fprintln(out, "| variant | events/s | ÷ raw, 1 client (same rep) | ÷ redis, same count (same rep) | ÷ bare amqp091 (same rep; target ≥ 0.8×) | peak RSS per Dispatcher |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|")
	for _, k := range order {
		ms := perKey[k]
		var eps, vsRaw, vsRedis, vsBare, rss []float64
		for _, m := range ms {
			eps = append(eps, m.EventsPerSec)
			if r, ok := raw1[m.Rep]; ok && r > 0 {
				vsRaw = append(vsRaw, m.EventsPerSec/r)
			}
			if r, ok := bare[m.Rep]; ok && r > 0 && m.Variant == "once" && m.Queue == PublisherAMQP {
				vsBare = append(vsBare, m.EventsPerSec/r)
			}
			if m.Variant != "raw" && m.Queue != PublisherRedis {
				// The bare publisher against one Dispatcher on Redis.
				count := max(m.Dispatchers, 1)
				red := byRep(func(o Measurement) bool {
					return o.Variant == "once" && o.Queue == PublisherRedis && o.Dispatchers == count
				})
				if r, ok := red[m.Rep]; ok && r > 0 {
					vsRedis = append(vsRedis, m.EventsPerSec/r)
				}
			}
			if m.PeakRSSKB > 0 {
				rss = append(rss, float64(m.PeakRSSKB)/1024)
			}
		}
		cell := func(v []float64, unit func(float64) string) string {
			if len(v) == 0 {
				return "–"
			}
			return spreadOf(v).Format(unit)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", k, cell(eps, kilo), cell(vsRaw, ratio), cell(vsRedis, ratio), cell(vsBare, ratio),
			cell(rss, func(v float64) string { return fmt.Sprintf("%.0f MB", v) }))
	}
	_ = cfg
}

// writeReport prints a bench's table, then where and how its figures were
// measured (params), unless --json printed the measurements instead.
func writeReport(out io.Writer, c Common, all []Measurement, version string, table func(), params string) {
	if c.JSON || len(all) == 0 {
		return
	}
	table()
	fmt.Fprintln(out)
	fmt.Fprintln(out, machineLine(version, params))
}

// machineLine says where and how the figures were measured.
func machineLine(pgVersion, params string) string {
	return fmt.Sprintf("Machine: %d cores (runtime.NumCPU), %s/%s, %s, PostgreSQL %s. %s. Figures: median (min–max) over the repetitions.",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), pgVersion, strings.TrimSuffix(params, "."))
}
