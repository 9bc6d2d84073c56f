// Package prometheus exposes what a process does as Prometheus metrics,
// served on its ops listener: the HTTP requests it answered, what its
// Dispatcher published, what its workers handled, its database pool, and
// the outbox backlog (read from the database at scrape time). Counters
// count the work of the process that serves them: scrape every process.
package prometheus

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/oncehq/once/buildinfo"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Metrics records what the process does and serves /metrics.
type Metrics struct {
	registry *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	limits       *prometheus.CounterVec

	published         prometheus.Counter
	failures          prometheus.Counter
	deadLettered      prometheus.Counter
	deliveryLatency   prometheus.Histogram
	brokerUp          prometheus.Gauge
	brokerUpOnce      sync.Once
	batchSize         prometheus.Histogram
	roundDuration     prometheus.Histogram
	claimDuration     prometheus.Histogram
	discoveryDuration prometheus.Histogram
	publishDuration   prometheus.Histogram

	relayed       prometheus.Counter
	relayReleased prometheus.Counter
	relayMarked   prometheus.Counter

	jobs        *prometheus.CounterVec
	jobRetries  *prometheus.CounterVec
	jobWaits    *prometheus.CounterVec
	jobsRunning *prometheus.GaugeVec
	jobDuration *prometheus.HistogramVec

	retentionDeleted *prometheus.CounterVec

	unconfirmedCommits prometheus.Counter
	primaryUp          prometheus.Gauge
	primaryLost        prometheus.Counter
	primaryChanges     prometheus.Counter
}

var (
	_ dispatch.Observer      = (*Metrics)(nil)
	_ dispatch.RelayObserver = (*Metrics)(nil)
	_ limits.Observer        = (*Metrics)(nil)
)

// latencyBuckets span a fast local call to a slow external one.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// discoveryBuckets start lower: a discovery over a healthy queue index
// answers in a fraction of a millisecond, and its growth is what to see.
var discoveryBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5}

func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func histogramVec(name, help string, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, labels)
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// New registers the metrics. stats may be nil (then no backlog gauges).
func New(stats ports.OutboxDiscovery, clock ports.Clock, log *slog.Logger) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		httpRequests: counterVec("once_http_requests_total",
			"API requests answered, by method, route (the path pattern) and status code.", "method", "route", "code"),
		httpDuration: histogramVec("once_http_request_duration_seconds",
			"Time to answer an API request, by method and route (the path pattern).", "method", "route"),
		limits: counterVec("once_http_limit_checks_total",
			"Checks of the workspaces' limits, by policy (writes: the rate of writes; concurrency: the cap on one workspace's "+
				"requests in progress in this process) and outcome: allowed, waited (admitted by the cap after waiting its turn), "+
				"limited (answered 429 RATE_LIMITED), abandoned (the request ended while it waited for the cap) or unmetered "+
				"(the rate limiter's Redis could not be asked and the write went through). No workspace label: scrape the logs for who.",
			"policy", "outcome"),

		published: counter("once_dispatch_published_total",
			"Outbox events this process's Dispatcher published (the broker accepted them)."),
		failures: counter("once_dispatch_publish_failures_total",
			"Outbox events whose publish by this process's Dispatcher failed (each attempt counts)."),
		deadLettered: counter("once_dispatch_dead_lettered_total",
			"Outbox events this process's Dispatcher moved to dead_letter after their last attempt. "+
				"Jobs workers give up on are once_worker_jobs_total{outcome=\"given_up\"}; "+
				"the dead letters waiting now are once_outbox_events{status=\"dead_letter\"}."),
		deliveryLatency: histogram("once_dispatch_delivery_latency_seconds",
			"Time from the business commit to the broker accepting the event.", latencyBuckets),
		brokerUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "once_dispatch_broker_up",
			Help: "1 while the Dispatcher publishes, 0 while it holds back because the broker is unreachable (its circuit breaker is open). Only in processes that run a Dispatcher.",
		}),
		batchSize: histogram("once_dispatch_batch_events", "Events claimed per Dispatcher round.",
			[]float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000}),
		roundDuration: histogram("once_dispatch_round_duration_seconds",
			"One Dispatcher round of one workspace batch: claim, publish and mark.", latencyBuckets),
		claimDuration: histogram("once_dispatch_claim_duration_seconds",
			"Time the claim of a batch took in the database.", latencyBuckets),
		discoveryDuration: histogram("once_dispatch_discovery_duration_seconds",
			"Time one Dispatcher round took to find the workspaces with due events (every round, whether it found any).", discoveryBuckets),
		publishDuration: histogram("once_dispatch_publish_duration_seconds",
			"Time the broker took to accept a batch.", latencyBuckets),

		relayed: counter("once_relay_published_total",
			"Outbox events this process published itself right after committing them (the broker accepted them). "+
				"Their delivery latency is in once_dispatch_delivery_latency_seconds too."),
		relayReleased: counter("once_relay_released_total",
			"Outbox events this process committed but handed to the Dispatchers unpublished (the broker unreachable or refusing, or the process stopping)."),
		relayMarked: counter("once_relay_marked_total",
			"Outbox events this process marked dispatched after relaying them. Fewer than published: a hold ended first, and a Dispatcher delivered them again."),

		jobs: counterVec("once_worker_jobs_total",
			"Jobs this process's workers finished, by event type and outcome: succeeded (the operation succeeded), "+
				"failed (the job ran and recorded its operation failed: credentials refused, not an image...), "+
				"given_up (retries spent or an unclassified error: task and operation failed, the event is a dead letter) "+
				"or interrupted (shutdown; the broker delivers it again).",
			"type", "outcome"),
		jobRetries: counterVec("once_worker_job_retries_total", "Runs of a job that failed and were parked to run again, by event type.", "type"),
		jobWaits:   counterVec("once_worker_job_waits_total", "Jobs parked before they ran, to wait for their destination (a breaker open, a pace spent), by event type.", "type"),
		jobsRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "once_worker_jobs_in_flight", Help: "Jobs being handled now, by event type.",
		}, []string{"type"}),
		jobDuration: histogramVec("once_worker_job_duration_seconds", "Time a job took, retries included, by event type.", "type"),

		retentionDeleted: counterVec("once_retention_deleted_total",
			"Finished records this process's maintenance deleted after their retention, by kind ("+expiringKinds()+").",
			"kind"),

		unconfirmedCommits: counter("once_db_commits_unconfirmed_total",
			"Commits whose wait for the synchronous standby was cancelled (a cancel, a statement_timeout, an operator): "+
				"PostgreSQL kept them on the primary only. Each was answered 503 UNAVAILABLE or retried, never taken as done; "+
				"a failover before the standby caught up loses them."),
		primaryUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "once_db_primary_up",
			Help: "0 from the first connection that died under this process (a restart, failover or switchover of its PostgreSQL) " +
				"until a new connection reaches a server again, 1 otherwise.",
		}),
		primaryLost: counter("once_db_primary_lost_total",
			"Times this process lost its PostgreSQL server: the first connection that died under it after a server was found."),
		primaryChanges: counter("once_db_primary_changes_total",
			"Times a new connection of this process reached another PostgreSQL server than the last "+
				"(another address, timeline or cluster: a promoted standby, a switchover)."),
	}
	m.primaryUp.Set(1)
	m.brokerUp.Set(1)
	m.registry.MustRegister(buildInfo(),
		m.httpRequests, m.httpDuration, m.limits,
		m.published, m.failures, m.deadLettered, m.deliveryLatency,
		m.batchSize, m.roundDuration, m.claimDuration, m.discoveryDuration, m.publishDuration,
		m.relayed, m.relayReleased, m.relayMarked,
		m.jobs, m.jobRetries, m.jobWaits, m.jobsRunning, m.jobDuration, m.retentionDeleted,
		m.unconfirmedCommits, m.primaryUp, m.primaryLost, m.primaryChanges,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if stats != nil {
		m.registry.MustRegister(&backlog{stats: stats, clock: clock, log: log})
	}
	return m
}

// buildInfo is once_build_info: always 1, its labels say what runs (the
// build `once version` describes).
func buildInfo() prometheus.Collector {
	info := buildinfo.Read()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "once_build_info", Help: "Always 1; the labels say which build of once runs.",
		ConstLabels: prometheus.Labels{"version": info.Version, "go_version": runtime.Version(), "revision": info.Commit, "build_date": info.Date},
	})
	g.Set(1)
	return g
}

// WatchDB adds the database pool's gauges and counters (go_sql_*: in use,
// idle, waits and wait time, per db_name).
func (m *Metrics) WatchDB(db *sql.DB, name string) {
	m.registry.MustRegister(collectors.NewDBStatsCollector(db, name))
}

// ObserveRequest records one answered API request.
func (m *Metrics) ObserveRequest(method, route string, status int, elapsed time.Duration) {
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(elapsed.Seconds())
}

// ObserveLimit records one check of a workspace's limits
// (limits.Observer).
func (m *Metrics) ObserveLimit(policy, outcome string) {
	m.limits.WithLabelValues(policy, outcome).Inc()
}

// Published records events the queue accepted at `at`.
func (m *Metrics) Published(events []model.OutboxEvent, at time.Time) {
	m.accepted(m.published, events, at)
}

// accepted counts events the queue accepted at `at` on c and observes
// their delivery latency, whoever published them.
func (m *Metrics) accepted(c prometheus.Counter, events []model.OutboxEvent, at time.Time) {
	c.Add(float64(len(events)))
	for _, e := range events {
		m.deliveryLatency.Observe(at.Sub(e.CreatedAt).Seconds())
	}
}

// Relayed records events the queue accepted from the relay at `at`.
func (m *Metrics) Relayed(events []model.OutboxEvent, at time.Time) {
	m.accepted(m.relayed, events, at)
}

// RelayReleased records n events the relay handed to the Dispatchers.
func (m *Metrics) RelayReleased(n int) { m.relayReleased.Add(float64(n)) }

// RelayMarked records n events the relay marked dispatched.
func (m *Metrics) RelayMarked(n int) { m.relayMarked.Add(float64(n)) }

// PublishFailed records n failed publishes.
func (m *Metrics) PublishFailed(n int) { m.failures.Add(float64(n)) }

// DeadLettered records n events parked in dead_letter.
func (m *Metrics) DeadLettered(n int) { m.deadLettered.Add(float64(n)) }

// DispatcherRunning adds once_dispatch_broker_up: only a process that runs a
// Dispatcher knows whether it can publish.
func (m *Metrics) DispatcherRunning() {
	m.brokerUpOnce.Do(func() { m.registry.MustRegister(m.brokerUp) })
}

// BrokerUp records whether the Dispatcher is publishing or holding back.
func (m *Metrics) BrokerUp(up bool) {
	m.DispatcherRunning()
	if up {
		m.brokerUp.Set(1)
	} else {
		m.brokerUp.Set(0)
	}
}

// Round records one dispatch round.
func (m *Metrics) Round(r dispatch.RoundStats) {
	m.batchSize.Observe(float64(r.Claimed))
	m.roundDuration.Observe(r.Total.Seconds())
	m.claimDuration.Observe(r.Claim.Seconds())
	m.publishDuration.Observe(r.Publish.Seconds())
}

// Discovered records one discovery of the workspaces with due events.
func (m *Metrics) Discovered(took time.Duration, _ int) {
	m.discoveryDuration.Observe(took.Seconds())
}

// JobStarted records a job a worker took up.
func (m *Metrics) JobStarted(eventType string) { m.jobsRunning.WithLabelValues(eventType).Inc() }

// JobWaited records a job parked before it ran, to wait for its
// destination.
func (m *Metrics) JobWaited(eventType string) { m.jobWaits.WithLabelValues(eventType).Inc() }

// JobRetried records one more attempt of a job.
func (m *Metrics) JobRetried(eventType string) { m.jobRetries.WithLabelValues(eventType).Inc() }

// JobEnded records how a job ended (a queue.Outcome*: succeeded, failed,
// given_up, interrupted) and how long it took.
func (m *Metrics) JobEnded(eventType, outcome string, elapsed time.Duration) {
	m.jobsRunning.WithLabelValues(eventType).Dec()
	m.jobs.WithLabelValues(eventType, outcome).Inc()
	m.jobDuration.WithLabelValues(eventType).Observe(elapsed.Seconds())
}

// Expired counts records the retention cleanup deleted.
func (m *Metrics) Expired(kind model.Expiring, n int) {
	m.retentionDeleted.WithLabelValues(string(kind)).Add(float64(n))
}

// UnconfirmedCommit counts a commit the synchronous standby did not
// confirm (the postgres adapter's CommitObserver).
func (m *Metrics) UnconfirmedCommit() { m.unconfirmedCommits.Inc() }

// PrimaryLost records that the process lost its PostgreSQL server (the
// postgres adapter's ServerObserver).
func (m *Metrics) PrimaryLost() {
	m.primaryUp.Set(0)
	m.primaryLost.Inc()
}

// PrimaryFound records that a new connection reached a server again,
// another one if changed (the postgres adapter's ServerObserver).
func (m *Metrics) PrimaryFound(changed bool) {
	m.primaryUp.Set(1)
	if changed {
		m.primaryChanges.Inc()
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// backlog reads counts at scrape time, through the discovery port: counts
// only, never rows, and without any workspace context. Every process reads
// the same database: aggregate with max, not sum.
type backlog struct {
	stats ports.OutboxDiscovery
	clock ports.Clock
	log   *slog.Logger
}

var (
	eventsDesc = prometheus.NewDesc("once_outbox_events", "Outbox events per status, in the database now (dispatched: an estimate once the history is large).", []string{"status"}, nil)
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
		b.log.Warn("outbox stats unavailable", slog.String("component", "metrics"), slog.String("error", domain.SanitizeError(err)))
		return
	}
	for _, st := range []model.OutboxStatus{model.OutboxPending, model.OutboxDispatching, model.OutboxDispatched, model.OutboxDeadLetter} {
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.GaugeValue, float64(s.ByStatus[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, s.OldestDueAge.Seconds())
}

// expiringKinds names the values of the retention's kind label: the
// records that are no task, then the table of every kind whose rows expire.
func expiringKinds() string {
	names := []string{string(model.ExpiringDeadLetters), string(model.ExpiringOperations)}
	for _, k := range kinds.Expiring() {
		names = append(names, k.Table)
	}
	return strings.Join(names, ", ")
}
