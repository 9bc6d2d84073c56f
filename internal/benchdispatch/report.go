package benchdispatch

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Result is what one run measured.
type Result struct {
	Publisher   string
	Dispatchers int
	Events      int
	// EventsPerSecond is Events / (last accept − first commit).
	EventsPerSecond float64
	// P50 and P99 of accept − commit, per event.
	P50, P99 time.Duration
	// Duplicates counts events the broker accepted more than once.
	Duplicates int
}

// summarize turns a complete recorder into a Result.
func summarize(publisher string, dispatchers int, rec *recorder) Result {
	n := len(rec.ids)
	res := Result{Publisher: publisher, Dispatchers: dispatchers, Events: n}
	latencies := make([]time.Duration, n)
	firstCommit, lastAccept := int64(math.MaxInt64), int64(0)
	for i := range n {
		c, a := rec.commit[i].Load(), rec.accept[i].Load()
		firstCommit, lastAccept = min(firstCommit, c), max(lastAccept, a)
		// The commit time is taken after Transact returned, so a Dispatcher
		// woken by the commit can, rarely, be faster: count that as 0.
		latencies[i] = time.Duration(max(0, a-c))
		if rec.publishes[i].Load() > 1 {
			res.Duplicates++
		}
	}
	if span := time.Duration(lastAccept - firstCommit); span > 0 {
		res.EventsPerSecond = float64(n) / span.Seconds()
	}
	slices.Sort(latencies)
	res.P50, res.P99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
	return res
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// writeTable prints the results as a Markdown table.
func writeTable(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| publisher | dispatchers | events | events/s | p50 commit→publish | p99 commit→publish | duplicates |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %s | %s | %d |\n",
			r.Publisher, r.Dispatchers, r.Events, r.EventsPerSecond, ms(r.P50), ms(r.P99), r.Duplicates)
	}
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
