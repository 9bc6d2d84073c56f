// Package stats is the one way the benches report a figure over their
// repetitions: the median with the least and the most.
package stats

import (
	"fmt"
	"slices"
)

// Spread is one figure over the repetitions.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// Of is the spread of values (the median of an even count is the mean of
// the middle two).
func Of(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Format prints "median (min–max)", the one value when all are equal, and
// "–" when there is none.
func (s Spread) Format(unit func(float64) string) string {
	if s.N == 0 {
		return "–"
	}
	if s.Min == s.Max {
		return unit(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", unit(s.Median), unit(s.Min), unit(s.Max))
}
