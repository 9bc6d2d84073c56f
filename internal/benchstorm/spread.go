package benchstorm

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// spread is one figure over the repetitions of a scenario: the median, and
// the least and the most.
type spread struct {
	median, min, max float64
	n                int
}

func spreadOf(values []float64) spread {
	if len(values) == 0 {
		return spread{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{median: m, min: s[0], max: s[len(s)-1], n: len(s)}
}

// format prints "median (min–max)", or the one value when all are equal.
func (s spread) format(unit func(float64) string) string {
	if s.n == 0 {
		return "–"
	}
	if s.min == s.max {
		return unit(s.median)
	}
	return fmt.Sprintf("%s (%s–%s)", unit(s.median), unit(s.min), unit(s.max))
}

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
		parts = append(parts, statusName(s)+":"+sp.format(count))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " ")
}

// ms prints one duration as duration does.
func ms(d time.Duration) string { return duration(d.Seconds()) }
