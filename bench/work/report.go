package work

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/oncehq/once/bench/stats"
)

// unit formats a figure's values.
type unit func(float64) string

var (
	perSecond = func(v float64) string { return fmt.Sprintf("%.1f/s", v) }
	seconds   = func(v float64) string { return fmt.Sprintf("%.2f s", v) }
	millis    = func(v float64) string { return fmt.Sprintf("%.1f ms", v) }
	// cpuMillis is CPU per job, to the hundredth: issue 42's bars are
	// 0.8 ms, and a tenth hid the steps toward them.
	cpuMillis = func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	count     = func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	percent   = func(v float64) string { return fmt.Sprintf("%.0f %%", v) }
	times     = func(v float64) string { return fmt.Sprintf("%.2f×", v) }
	ratioUnit = func(v float64) string { return fmt.Sprintf("%.2f", v) }
)

// figure is one value one repetition measured.
type figure struct {
	scenario, name string
	unit           unit
	value          float64
	target         string // what it is held against, if anything
}

// results gathers the figures of every repetition, in the order they were
// first seen.
type results struct {
	order []string
	rows  map[string]*resultRow
}

type resultRow struct {
	scenario, name, target string
	unit                   unit
	values                 []float64
}

func (r *results) add(figs ...figure) {
	if r.rows == nil {
		r.rows = map[string]*resultRow{}
	}
	for _, f := range figs {
		key := f.scenario + "\x00" + f.name
		row, ok := r.rows[key]
		if !ok {
			row = &resultRow{scenario: f.scenario, name: f.name, unit: f.unit, target: f.target}
			r.rows[key] = row
			r.order = append(r.order, key)
		}
		row.values = append(row.values, f.value)
	}
}

// write prints the table: per figure, the median (min–max) of the
// repetitions, and each repetition's value in the order they ran.
func (r *results) write(w io.Writer) {
	fmt.Fprintln(w, "| scenario | figure | median (min–max) | runs | per repetition | against |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|---|")
	for _, key := range r.order {
		row := r.rows[key]
		each := make([]string, len(row.values))
		for i, v := range row.values {
			each[i] = row.unit(v)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s |\n", row.scenario, row.name,
			stats.Of(row.values).Format(row.unit), len(row.values), strings.Join(each, " · "), row.target)
	}
}
