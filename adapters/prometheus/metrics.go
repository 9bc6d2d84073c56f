// Package prometheus exposes the outbox's health as Prometheus metrics: what
// is waiting (per status, oldest due age, read from the database at scrape
// time) and what the dispatchers did (published, failed, dead-lettered, and
// how long events waited between commit and publish, and whether the broker
// is reachable).
package prometheus

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
)

// Metrics records dispatcher activity and serves /metrics.
type Metrics struct {
	registry     *prometheus.Registry
	published    prometheus.Counter
	failures     prometheus.Counter
	deadLetters  prometheus.Counter
	dispatchWait prometheus.Histogram
	brokerUp     prometheus.Gauge
}

// New registers the metrics. stats may be nil (then no backlog gauges).
func New(stats ports.OutboxDiscovery, clock ports.Clock, log *slog.Logger) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "once_outbox_published_total", Help: "Outbox events accepted by the queue.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "once_outbox_publish_failures_total", Help: "Outbox events whose publish failed (each attempt counts).",
		}),
		deadLetters: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "once_outbox_dead_letters_total", Help: "Outbox events moved to dead_letter after too many failures.",
		}),
		dispatchWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "once_outbox_dispatch_latency_seconds",
			Help:    "Time from the business commit to the queue accepting the event.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		brokerUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "once_dispatch_broker_up",
			Help: "1 while the Dispatcher publishes, 0 while it holds back because the broker is unreachable (its circuit breaker is open).",
		}),
	}
	m.brokerUp.Set(1)
	m.registry.MustRegister(m.published, m.failures, m.deadLetters, m.dispatchWait, m.brokerUp,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if stats != nil {
		m.registry.MustRegister(&backlog{stats: stats, clock: clock, log: log})
	}
	return m
}

// Published records events the queue accepted at `at`.
func (m *Metrics) Published(events []domain.OutboxEvent, at time.Time) {
	m.published.Add(float64(len(events)))
	for _, e := range events {
		m.dispatchWait.Observe(at.Sub(e.CreatedAt).Seconds())
	}
}

// PublishFailed records n failed publishes.
func (m *Metrics) PublishFailed(n int) { m.failures.Add(float64(n)) }

// DeadLettered records n events parked in dead_letter.
func (m *Metrics) DeadLettered(n int) { m.deadLetters.Add(float64(n)) }

// BrokerUp records whether the Dispatcher is publishing or holding back.
func (m *Metrics) BrokerUp(up bool) {
	if up {
		m.brokerUp.Set(1)
	} else {
		m.brokerUp.Set(0)
	}
}

// Round records one dispatch round. (Histograms for batch size, claim and
// publish latency hang here.)
func (m *Metrics) Round(dispatch.RoundStats) {}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// backlog reads counts at scrape time, through the discovery port: counts
// only, never rows, and without any workspace context.
type backlog struct {
	stats ports.OutboxDiscovery
	clock ports.Clock
	log   *slog.Logger
}

var (
	eventsDesc = prometheus.NewDesc("once_outbox_events", "Outbox events per status.", []string{"status"}, nil)
	oldestDesc = prometheus.NewDesc("once_outbox_oldest_due_age_seconds", "Age of the oldest event due for dispatch (0 when none is due).", nil, nil)
)

func (b *backlog) Describe(ch chan<- *prometheus.Desc) {
	ch <- eventsDesc
	ch <- oldestDesc
}

func (b *backlog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s, err := b.stats.Stats(ctx, b.clock.Now())
	if err != nil {
		b.log.Warn("outbox stats unavailable", slog.String("error", domain.SanitizeError(err)))
		return
	}
	for _, st := range []domain.OutboxStatus{domain.OutboxPending, domain.OutboxDispatching, domain.OutboxDispatched, domain.OutboxDeadLetter} {
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.GaugeValue, float64(s.ByStatus[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, s.OldestDueAge.Seconds())
}
