package main

import (
	"slices"
)

// spread is a median with the smallest and largest value.
type spread struct {
	Median, Min, Max float64
}

// summarize gives the median (the mean of the middle two for an even
// count), min and max of xs; zero for none.
func summarize(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	m := s[mid]
	if len(s)%2 == 0 {
		m = (s[mid-1] + s[mid]) / 2
	}
	return spread{Median: m, Min: s[0], Max: s[len(s)-1]}
}

// ratios divides a by b repetition by repetition: both ran in the same
// repetition, back to back, so the machine's load is as alike as it gets.
// A repetition where b is zero is left out.
func ratios(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, 0, n)
	for i := range n {
		if b[i] > 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}
