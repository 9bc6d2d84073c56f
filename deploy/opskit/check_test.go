package opskit

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFindsMetricsAndLabels(t *testing.T) {
	for _, tc := range []struct {
		expr     string
		metrics  []string
		labels   map[string][]string // matcher labels by metric
		grouping []string
	}{
		{expr: `max(once_outbox_oldest_due_age_seconds) > 300`, metrics: []string{"once_outbox_oldest_due_age_seconds"}},
		{
			expr:     `sum by (type) (increase(once_worker_jobs_total{outcome="given_up", type!="webhook.deliver"}[15m])) > 0`,
			metrics:  []string{"once_worker_jobs_total"},
			labels:   map[string][]string{"once_worker_jobs_total": {"outcome", "type"}},
			grouping: []string{"type"},
		},
		{
			expr: "histogram_quantile(0.99, sum by (le, route) (rate(once_http_request_duration_seconds_bucket{route=~\"/v1/.*\"}[$__rate_interval])))\n" +
				"  # a comment naming not_a_metric\n",
			metrics:  []string{"once_http_request_duration_seconds_bucket"},
			labels:   map[string][]string{"once_http_request_duration_seconds_bucket": {"route"}},
			grouping: []string{"le", "route"},
		},
		{
			expr:     `sum without (instance) (a_total) / on (job) group_left (version) b_info offset 5m and ignoring(x) c > bool 1e3`,
			metrics:  []string{"a_total", "b_info", "c"},
			grouping: []string{"instance", "job", "version", "x"},
		},
		{
			expr:    `{__name__="once_build_info", job=~"once-.*"} or absent(up{job="a,b}"}) or vector(0) or once:rec:rate5m`,
			metrics: []string{"once_build_info", "up", "once:rec:rate5m"},
			labels:  map[string][]string{"once_build_info": {"job"}, "up": {"job"}},
		},
		{
			expr:    `rate(x_total{instance="$instance"}[5m:1m]) * inf + NaN - ${var:csv} + topk(3, y)`,
			metrics: []string{"x_total", "y"},
			labels:  map[string][]string{"x_total": {"instance"}},
		},
		{expr: `'a string' + "x\"y" + count_values("v", z)`, metrics: []string{"z"}},
	} {
		refs, err := Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		assert.Equal(t, tc.metrics, refs.Metrics(), tc.expr)
		assert.ElementsMatch(t, tc.grouping, refs.Grouping, tc.expr)
		for _, s := range refs.Selectors {
			assert.ElementsMatch(t, tc.labels[s.Metric], s.Labels, "%s: %s", tc.expr, s.Metric)
		}
	}
}

func TestParseRefusesWhatItCannotRead(t *testing.T) {
	for _, expr := range []string{`x{a="b}`, `x{a="b"`, `rate(x[5m)`, `x{="b"}`} {
		_, err := Parse(expr)
		assert.Error(t, err, expr)
	}
}

const scrape = `# HELP once_worker_jobs_total Jobs.
# TYPE once_worker_jobs_total counter
once_worker_jobs_total{outcome="succeeded",type="store.credentials.verify"} 1
# HELP once_dispatch_delivery_latency_seconds Latency.
# TYPE once_dispatch_delivery_latency_seconds histogram
once_dispatch_delivery_latency_seconds_bucket{le="1"} 1
once_dispatch_delivery_latency_seconds_bucket{le="+Inf"} 1
once_dispatch_delivery_latency_seconds_sum 0.1
once_dispatch_delivery_latency_seconds_count 1
# HELP go_sql_wait_count_total Waits.
# TYPE go_sql_wait_count_total counter
go_sql_wait_count_total{db_name="once"} 0
`

func known(t *testing.T) Exported {
	t.Helper()
	e := Exported{}
	require.NoError(t, e.AddScrape(strings.NewReader(scrape)))
	return e
}

// The checker names a misspelt metric, a label the metric does not carry
// (in a matcher and in a by clause), and passes what is right, recorded
// series included.
func TestCheckNamesWhatNoProcessExports(t *testing.T) {
	rules := []byte(`groups:
  - name: g
    rules:
      - record: once:jobs:rate5m
        expr: sum by (type, outcome) (rate(once_worker_jobs_total[5m]))
      - alert: Right
        expr: once:jobs:rate5m{outcome="given_up"} > 0 and histogram_quantile(0.9, sum by (le) (rate(once_dispatch_delivery_latency_seconds_bucket[5m]))) > 1
      - alert: Misspelt
        expr: sum(rate(once_worker_job_total{outcome="given_up"}[5m])) > 0
      - alert: WrongLabel
        expr: rate(go_sql_wait_count_total{db="once"}[5m]) > 0
      - alert: WrongGrouping
        expr: sum by (destination) (rate(once_worker_jobs_total[5m])) > 0
      - alert: RecordedWithoutItsLabel
        expr: once:jobs:rate5m{job="x", system="ai"} > 0
`)
	queries, err := RuleQueries("rules.yaml", rules)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"rules.yaml: alert Misspelt: metric once_worker_job_total is exported by no process",
		"rules.yaml: alert WrongLabel: label db of go_sql_wait_count_total is exported by no process",
		"rules.yaml: alert WrongGrouping: label destination (by, without, on) is on none of once_worker_jobs_total",
		"rules.yaml: alert RecordedWithoutItsLabel: label system of once:jobs:rate5m is exported by no process",
	}, Check(queries, known(t)))
}

func TestDashboardQueriesWalkRows(t *testing.T) {
	queries, err := DashboardQueries("d.json", []byte(`{"panels": [
		{"title": "A", "targets": [{"expr": "x_total"}]},
		{"title": "Row", "type": "row", "panels": [{"title": "B", "targets": [{"expr": "once_worker_jobs_total{z=\"1\"}"}, {"expr": ""}]}]}
	]}`))
	require.NoError(t, err)
	assert.Equal(t, []Query{{Where: `d.json: panel "A"`, Expr: "x_total"}, {Where: `d.json: panel "B"`, Expr: `once_worker_jobs_total{z="1"}`}}, queries)
	assert.Equal(t, []string{
		`d.json: panel "A": metric x_total is exported by no process`,
		`d.json: panel "B": label z of once_worker_jobs_total is exported by no process`,
	}, Check(queries, known(t)))
}

func TestPostgresExporterQueriesDefineMetrics(t *testing.T) {
	raw, err := os.ReadFile("../postgres_exporter/once-queries.yaml")
	require.NoError(t, err)
	e := Exported{}
	require.NoError(t, e.AddPostgresExporterQueries(raw))
	assert.Contains(t, e, "pg_oldest_xact_age_seconds")
	assert.Contains(t, e, "once_outbox_partitions_ahead_seconds")
	assert.Contains(t, e, "once_outbox_partitions_slice_seconds")

	e = Exported{}
	require.NoError(t, e.AddPostgresExporterQueries([]byte("q:\n  query: SELECT 1 AS a, 'x' AS b\n  metrics:\n    - b: {usage: LABEL}\n    - a: {usage: GAUGE}\n")))
	assert.Equal(t, Exported{"q_a": {"b": true}}, e)
	assert.Error(t, e.AddPostgresExporterQueries([]byte("q:\n  metrics:\n    - a: {usage: HISTOGRAMX}\n")))
}
