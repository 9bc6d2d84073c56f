package main

import (
	"fmt"
	"io"
	"strings"
)

// machine describes where and with what the run was made.
type machine struct {
	Cores      int
	Go         string
	Postgres   string
	Redis      string
	LoadAvg    string
	Parameters string
}

// variantRow is one variant's figures, one per repetition.
type variantRow struct {
	Name  string
	Label string
	EPS   []float64
}

func (m machine) line() string {
	return fmt.Sprintf("machine: %d cores, %s, PostgreSQL %s, Redis %s, load average at start %s; %s",
		m.Cores, m.Go, m.Postgres, m.Redis, m.LoadAvg, m.Parameters)
}

// report prints the Markdown tables: events/s per variant as a median
// with min–max and each repetition, then the ratios of once to each peer,
// per repetition and as a median, then the machine line.
func report(w io.Writer, m machine, rows []variantRow) {
	reps := 0
	for _, r := range rows {
		reps = max(reps, len(r.EPS))
	}
	fmt.Fprintln(w, "| variant | events/s, median (min–max) | per repetition |")
	fmt.Fprintln(w, "|---|---:|---|")
	for _, r := range rows {
		s := summarize(r.EPS)
		fmt.Fprintf(w, "| %s | %s (%s–%s) | %s |\n", r.Label, kilo(s.Median), kilo(s.Min), kilo(s.Max), join(r.EPS, kilo))
	}

	var once *variantRow
	for i := range rows {
		if rows[i].Name == "once" {
			once = &rows[i]
		}
	}
	if once != nil && len(rows) > 1 {
		fmt.Fprintln(w)
		head := "| ratio |"
		sep := "|---|"
		for i := range reps {
			head += fmt.Sprintf(" rep %d |", i+1)
			sep += "---:|"
		}
		fmt.Fprintln(w, head+" median |")
		fmt.Fprintln(w, sep+"---:|")
		for _, r := range rows {
			if r.Name == "once" {
				continue
			}
			rs := ratios(once.EPS, r.EPS)
			cells := make([]string, reps)
			for i := range cells {
				cells[i] = "–"
				if i < len(rs) {
					cells[i] = times(rs[i])
				}
			}
			fmt.Fprintf(w, "| once / %s | %s | %s |\n", r.Name, strings.Join(cells, " | "), times(summarize(rs).Median))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, m.line())
}

// kilo writes events/s as 8.1k, or as is below 1000.
func kilo(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.1fk", v/1000)
	}
	return fmt.Sprintf("%.0f", v)
}

func times(v float64) string { return fmt.Sprintf("%.2f×", v) }

func join(xs []float64, f func(float64) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = f(x)
	}
	return strings.Join(parts, ", ")
}
