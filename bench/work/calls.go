package work

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/adapters/simulator/simhttp"
)

// spanKeysPerRead bounds the keys one concurrency read-out asks for, so
// its URL stays short.
const spanKeysPerRead = 100

// peakCalls is the most platform calls the simulator had in flight at
// once, over every shop: the jobs that were running their external call
// together, which the worker's slots bound.
func peakCalls(ctx context.Context, sim *simhttp.Admin) (int, error) {
	spans, err := callsOf(ctx, sim, "shop:")
	return peakOverlap(spans), err
}

// callsOf is every call of the simulator's concurrency read-out under the
// keys starting with prefix.
func callsOf(ctx context.Context, sim *simhttp.Admin, prefix string) ([]simcore.Span, error) {
	all, err := sim.InFlight(ctx)
	if err != nil {
		return nil, err
	}
	var keys []string
	for k := range all.MaxInFlight {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	var spans []simcore.Span
	for chunk := range slices.Chunk(keys, spanKeysPerRead) {
		got, err := sim.InFlight(ctx, chunk...)
		if err != nil {
			return nil, err
		}
		for _, s := range got.Calls {
			spans = append(spans, s...)
		}
	}
	return spans, nil
}

// peakOverlap is the most spans open at one instant; a span still open
// (no End) counts to the end. A span ending when another starts does not
// overlap it.
func peakOverlap(spans []simcore.Span) int {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, s := range spans {
		edges = append(edges, edge{s.Start, 1})
		if !s.End.IsZero() {
			edges = append(edges, edge{s.End, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta)) // ends first
	})
	open, most := 0, 0
	for _, e := range edges {
		open += e.delta
		most = max(most, open)
	}
	return most
}

// cpuTimes is the machine's CPU time from /proc/stat, in clock ticks: all
// of it, and the part spent idle or waiting for I/O.
type cpuTimes struct{ total, idle int64 }

func readCPUTimes() (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var t cpuTimes
	for i, f := range fields[1:] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return cpuTimes{}, err
		}
		t.total += v
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		}
	}
	return t, nil
}

// busy is the fraction of the machine's CPU time that was busy between
// from and t.
func (t cpuTimes) busySince(from cpuTimes) float64 {
	return 1 - ratio(float64(t.idle-from.idle), float64(t.total-from.total))
}

// clockTicks is USER_HZ, the unit of /proc/stat.
const clockTicks = 100

// machineCPU is the busy CPU time of the whole machine between from and
// to, over all its cores.
func machineCPU(from, to cpuTimes) time.Duration {
	busy := (to.total - to.idle) - (from.total - from.idle)
	return time.Duration(busy) * time.Second / clockTicks
}
