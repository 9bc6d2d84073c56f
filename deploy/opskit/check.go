package opskit

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// Query is one PromQL expression of the kit and where it is.
type Query struct {
	Where string // "once-rules.yaml: alert OnceDeliveryLagging"
	Expr  string
	// Record is the series a recording rule writes, "" for any other.
	Record string
}

// Exported are the metrics that exist and the label names each carries.
type Exported map[string]map[string]bool

// TargetLabels are the labels Prometheus gives every series it scrapes.
var TargetLabels = []string{"job", "instance"}

// Add records metric with labels.
func (e Exported) Add(metric string, labels ...string) {
	if e[metric] == nil {
		e[metric] = map[string]bool{}
	}
	for _, l := range labels {
		e[metric][l] = true
	}
}

// AddScrape adds what one /metrics body in the text format shows. A
// histogram is its _bucket (with le), _sum and _count series; a summary
// its quantiles (with quantile), _sum and _count.
func (e Exported) AddScrape(r io.Reader) error {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return err
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, p := range m.GetLabel() {
				labels = append(labels, p.GetName())
			}
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				e.Add(name+"_bucket", append(labels, "le")...)
				e.Add(name+"_sum", labels...)
				e.Add(name+"_count", labels...)
			case dto.MetricType_SUMMARY:
				e.Add(name, append(labels, "quantile")...)
				e.Add(name+"_sum", labels...)
				e.Add(name+"_count", labels...)
			default:
				e.Add(name, labels...)
			}
		}
	}
	return nil
}

// AddPostgresExporterQueries adds the metrics a postgres_exporter queries
// file (--extend.query-path) defines: <query>_<column> for each GAUGE or
// COUNTER column, labelled by its LABEL columns.
func (e Exported) AddPostgresExporterQueries(raw []byte) error {
	file, err := ParseExporterQueries(raw)
	if err != nil {
		return err
	}
	for query, q := range file {
		var labels, values []string
		for _, m := range q.Metrics {
			for column, def := range m {
				switch strings.ToUpper(def["usage"]) {
				case "LABEL":
					labels = append(labels, column)
				case "GAUGE", "COUNTER":
					values = append(values, column)
				default:
					return fmt.Errorf("query %s, column %s: usage %q is none of LABEL, GAUGE, COUNTER", query, column, def["usage"])
				}
			}
		}
		for _, v := range values {
			e.Add(query+"_"+v, labels...)
		}
	}
	return nil
}

// ExporterQuery is one query of a postgres_exporter queries file: its SQL
// and its columns, each with its usage (LABEL, GAUGE, COUNTER) and
// description.
type ExporterQuery struct {
	Query   string                         `yaml:"query"`
	Metrics []map[string]map[string]string `yaml:"metrics"`
}

// ParseExporterQueries reads a postgres_exporter queries file, by query
// name.
func ParseExporterQueries(raw []byte) (map[string]ExporterQuery, error) {
	var file map[string]ExporterQuery
	err := yaml.Unmarshal(raw, &file)
	return file, err
}

// RuleQueries are the expressions of a Prometheus rules file.
func RuleQueries(file string, raw []byte) ([]Query, error) {
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Record string `yaml:"record"`
				Alert  string `yaml:"alert"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []Query
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			where := fmt.Sprintf("%s: alert %s", file, r.Alert)
			if r.Record != "" {
				where = fmt.Sprintf("%s: record %s", file, r.Record)
			}
			out = append(out, Query{Where: where, Expr: r.Expr, Record: r.Record})
		}
	}
	return out, nil
}

// DashboardQueries are the expressions of a Grafana dashboard's panels
// (those of rows included).
func DashboardQueries(file string, raw []byte) ([]Query, error) {
	type panel struct {
		Title   string  `json:"title"`
		Panels  []panel `json:"panels"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var dash struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []Query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if t.Expr != "" {
					out = append(out, Query{Where: fmt.Sprintf("%s: panel %q", file, p.Title), Expr: t.Expr})
				}
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	return out, nil
}

// Check returns a problem for each metric the queries name that known
// does not hold, and each label they match or group by that none of their
// metrics carries. A recording rule's series becomes known, with the
// labels it groups by (or its metrics' labels, without grouping), for the
// queries after it. known is not changed.
func Check(queries []Query, known Exported) []string {
	known = known.clone()
	var problems []string
	for _, q := range queries {
		refs, err := Parse(q.Expr)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", q.Where, err))
			continue
		}
		problems = append(problems, check(q.Where, refs, known)...)
		if q.Record != "" {
			labels := refs.Grouping
			if len(labels) == 0 {
				labels = known.labelsOf(refs.Metrics())
			}
			known.Add(q.Record, labels...)
		}
	}
	return problems
}

func check(where string, refs Refs, known Exported) []string {
	var problems []string
	for _, m := range refs.Metrics() {
		if _, ok := known[m]; !ok {
			problems = append(problems, fmt.Sprintf("%s: metric %s is exported by no process", where, m))
		}
	}
	for _, s := range refs.Selectors {
		of := []string{s.Metric}
		switch _, ok := known[s.Metric]; {
		case s.Metric == "":
			of = known.names()
		case !ok:
			continue // named above; its labels say nothing more
		}
		for _, l := range s.Labels {
			if !known.anyHas(of, l) {
				problems = append(problems, fmt.Sprintf("%s: label %s of %s is exported by no process", where, l, describe(s.Metric)))
			}
		}
	}
	for _, l := range refs.Grouping {
		if !known.anyHas(refs.Metrics(), l) {
			problems = append(problems, fmt.Sprintf("%s: label %s (by, without, on) is on none of %s", where, l, strings.Join(refs.Metrics(), ", ")))
		}
	}
	return problems
}

func describe(metric string) string {
	if metric == "" {
		return "any metric"
	}
	return metric
}

// anyHas says whether a metric of metrics carries label (a target label
// always does).
func (e Exported) anyHas(metrics []string, label string) bool {
	if slices.Contains(TargetLabels, label) {
		return true
	}
	for _, m := range metrics {
		if e[m][label] {
			return true
		}
	}
	return false
}

func (e Exported) labelsOf(metrics []string) []string {
	var out []string
	for _, m := range metrics {
		for l := range e[m] {
			out = append(out, l)
		}
	}
	return out
}

func (e Exported) names() []string {
	out := make([]string, 0, len(e))
	for m := range e {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func (e Exported) clone() Exported {
	out := Exported{}
	for m, labels := range e {
		out.Add(m)
		for l := range labels {
			out[m][l] = true
		}
	}
	return out
}
