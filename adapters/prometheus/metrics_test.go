package prometheus_test

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/buildinfo"
	"github.com/oncehq/once/domain/dispatch"
)

func scrape(t *testing.T, m *prometheus.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	return rec.Body.String()
}

// Each hook lands in the series docs/operating.md documents.
func TestMetricsRecordWhatTheProcessDid(t *testing.T) {
	m := prometheus.New(nil, nil, slog.New(slog.DiscardHandler))
	m.Round(dispatch.RoundStats{Claimed: 7, Claim: 2 * time.Millisecond, Publish: 30 * time.Millisecond, Total: 40 * time.Millisecond})
	m.ObserveRequest("POST", "/v1/stores", 201, 5*time.Millisecond)
	m.ObserveRequest("GET", "unmatched", 404, time.Millisecond)
	m.JobStarted("media.process")
	m.JobStarted("media.process")
	m.JobRetried("media.process")
	m.JobEnded("media.process", "given_up", time.Second)
	m.DeadLettered(2)

	out := scrape(t, m)
	for _, want := range []string{
		"once_dispatch_batch_events_sum 7",
		"once_dispatch_batch_events_count 1",
		"once_dispatch_claim_duration_seconds_sum 0.002",
		"once_dispatch_publish_duration_seconds_sum 0.03",
		"once_dispatch_round_duration_seconds_sum 0.04",
		`once_http_requests_total{code="201",method="POST",route="/v1/stores"} 1`,
		`once_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`once_http_request_duration_seconds_count{method="POST",route="/v1/stores"} 1`,
		`once_worker_jobs_in_flight{type="media.process"} 1`,
		`once_worker_job_retries_total{type="media.process"} 1`,
		`once_worker_jobs_total{outcome="given_up",type="media.process"} 1`,
		"once_dispatch_dead_lettered_total 2",
		"once_build_info{",
	} {
		assert.Contains(t, out, want)
	}
	info := buildinfo.Read() // the build `once version` describes
	assert.Contains(t, out, `revision="`+info.Commit+`",version="`+info.Version+`"`)
	assert.Contains(t, out, `build_date="`+info.Date+`"`)
	assert.False(t, strings.Contains(out, "once_dispatch_broker_up"), "no Dispatcher ran here")
	m.BrokerUp(false)
	assert.Contains(t, scrape(t, m), "once_dispatch_broker_up 0")
}

// Every series follows Prometheus's naming rules (promlint): counters end
// in _total, durations are in seconds and say so, no abbreviated units.
func TestMetricNamesFollowThePrometheusConventions(t *testing.T) {
	m := prometheus.New(nil, nil, slog.New(slog.DiscardHandler))
	m.Round(dispatch.RoundStats{Claimed: 1})
	m.ObserveRequest("GET", "/v1/stores", 200, time.Millisecond)
	m.JobStarted("media.process")
	m.JobRetried("media.process")
	m.JobEnded("media.process", "succeeded", time.Second)
	m.Published(nil, time.Now())
	m.PublishFailed(1)
	m.DeadLettered(1)
	m.BrokerUp(true)

	problems, err := promlint.New(strings.NewReader(scrape(t, m))).Lint()
	require.NoError(t, err)
	var ours []promlint.Problem
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "once_") {
			ours = append(ours, p)
		}
	}
	assert.Empty(t, ours)
}
