package storm

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oncehq/once/bench/stats"
)

// spread is one figure over the repetitions of a scenario.
type spread = stats.Spread

var spreadOf = stats.Of

// count prints a count; a median of an even number of runs may be a half.
func count(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// percent prints a share in percent.
func percent(v float64) string { return fmt.Sprintf("%.1f %%", v) }

// duration prints seconds as milliseconds under a second, seconds above.
func duration(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// spreadOfInts and spreadOfDurations collect one figure of every run.
func spreadOfInts[R any](runs []R, figure func(R) int) spread {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = float64(figure(r))
	}
	return spreadOf(v)
}

func spreadOfDurations[R any](runs []R, figure func(R) time.Duration) spread {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = figure(r).Seconds()
	}
	return spreadOf(v)
}

// formatAnswers prints answers by status over runs: "201:1 409:830
// (812–901)", every status any run got, 0 where a run got none.
func formatAnswers(runs []map[int]int) string {
	seen := map[int]bool{}
	for _, r := range runs {
		for s := range r {
			seen[s] = true
		}
	}
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(seen)) {
		sp := spreadOfInts(runs, func(r map[int]int) int { return r[s] })
		parts = append(parts, statusName(s)+":"+sp.Format(count))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " ")
}

// ms prints one duration as duration does.
func ms(d time.Duration) string { return duration(d.Seconds()) }
