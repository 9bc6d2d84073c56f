package prometheus_test

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/prometheus"
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
	m.ObserveRequest("POST /v1/stores", 201, 5*time.Millisecond)
	m.ObserveRequest("unmatched", 404, time.Millisecond)
	m.JobStarted("media.process")
	m.JobStarted("media.process")
	m.JobRetried("media.process")
	m.JobEnded("media.process", "failed", time.Second)
	m.DeadLettered(2)

	out := scrape(t, m)
	for _, want := range []string{
		"once_dispatch_batch_size_sum 7",
		"once_dispatch_batch_size_count 1",
		"once_dispatch_claim_duration_seconds_sum 0.002",
		"once_dispatch_publish_duration_seconds_sum 0.03",
		"once_dispatch_round_duration_seconds_sum 0.04",
		`once_http_requests_total{code="201",route="POST /v1/stores"} 1`,
		`once_http_requests_total{code="404",route="unmatched"} 1`,
		`once_http_request_duration_seconds_count{route="POST /v1/stores"} 1`,
		`once_worker_jobs_in_flight{type="media.process"} 1`,
		`once_worker_job_retries_total{type="media.process"} 1`,
		`once_worker_jobs_total{outcome="failed",type="media.process"} 1`,
		"once_dispatch_dead_lettered_total 2",
		"once_build_info{",
	} {
		assert.Contains(t, out, want)
	}
	assert.False(t, strings.Contains(out, "once_dispatch_broker_up"), "no Dispatcher ran here")
	m.BrokerUp(false)
	assert.Contains(t, scrape(t, m), "once_dispatch_broker_up 0")
}
