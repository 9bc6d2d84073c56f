package storm

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

// tally counts the answers of a scenario by status and keeps their
// latencies. Safe for concurrent use.
type tally struct {
	mu        sync.Mutex
	byStatus  map[int]int
	latencies []time.Duration
}

func (t *tally) add(a answer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byStatus == nil {
		t.byStatus = map[int]int{}
	}
	t.byStatus[a.status]++
	t.latencies = append(t.latencies, a.latency)
}

// counts is a copy of the answers by status (0: no answer).
func (t *tally) counts() map[int]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.byStatus)
}

// latency is the nearest-rank p50 and p99 and the maximum.
func (t *tally) latency() latencies {
	t.mu.Lock()
	sorted := slices.Clone(t.latencies)
	t.mu.Unlock()
	slices.Sort(sorted)
	if len(sorted) == 0 {
		return latencies{}
	}
	return latencies{P50: percentile(sorted, 0.50), P99: percentile(sorted, 0.99), Max: sorted[len(sorted)-1]}
}

// latencies of one scenario run.
type latencies struct{ P50, P99, Max time.Duration }

func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// total is the number of answers in counts.
func total(counts map[int]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// failures are the answers a client may not get under load: 5xx, and no
// answer at all.
func failures(counts map[int]int) int {
	n := counts[0]
	for s, c := range counts {
		if s >= 500 {
			n += c
		}
	}
	return n
}

// statusName is how the table names a status; 0 is "none" (no answer).
func statusName(s int) string {
	if s == 0 {
		return "none"
	}
	return fmt.Sprint(s)
}
