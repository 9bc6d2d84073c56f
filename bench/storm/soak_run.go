package storm

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// soak is one soak run: the deployment, the load, the maintenance and the
// open snapshot, sampled into rows.
type soak struct {
	r   *runner
	d   *deployment
	cfg SoakConfig
	// ops is each process's /metrics URL.
	ops map[string]string

	capacity, rate float64
	load           *soakLoad
	maint          *soakMaintenance
	snapshotOpen   atomic.Bool
	snapshotSeen   atomic.Bool // open at some time in the current window
	snapshotErr    error
	stopOnce       sync.Once
	cancel         context.CancelFunc
	wg             sync.WaitGroup

	// prev are the dispatch process's histograms at the last sample.
	prevClaim, prevDiscovery, prevDelivery buckets
}

// soakRow is one sample: what happened in the window before it, and the
// state at its end.
type soakRow struct {
	At                 time.Duration // since the load started
	Snapshot           bool          // a snapshot was held open in the window
	Rate               float64       // accepted creates per second
	Failed             map[int]int   // creates not accepted, by status (0: no answer)
	HTTPP99            time.Duration
	DeliveryP99        float64 // seconds, commit → broker accepted (dispatch metrics)
	ClaimP99           float64 // seconds
	DiscoveryP99       float64 // seconds, every round's discovery of due workspaces
	OutboxBytes        int64   // every partition of outbox_events, indexes and TOAST included
	LiveBytes          int64   // outbox_events_live alone: the queue
	IdempotencyBytes   int64
	OutboxDead         int64
	IdempotencyDead    int64
	Partitions         int // range partitions of dispatched events
	Removed            int // events and records the maintenance removed in the window
	RSS, Goroutines    map[string]float64
	Load1              float64
	MaintenanceFailure string
}

// run calibrates, loads and samples until the duration is over.
func (s *soak) run(ctx context.Context) ([]soakRow, error) {
	s.load = newSoakLoad(s.d.api)
	fmt.Fprintf(s.r.progress, "== calibrating for %s: clients as fast as the service answers\n", s.cfg.Calibrate)
	s.capacity = s.load.capacity(ctx, 16, s.cfg.Calibrate)
	s.rate = max(s.capacity*s.cfg.Fraction, 1)
	fmt.Fprintf(s.r.progress, "== capacity %.0f creates/s; soak at %.0f/s (%.0f %%) for %s\n",
		s.capacity, s.rate, s.cfg.Fraction*100, s.cfg.Duration)

	var err error
	if s.maint, err = newSoakMaintenance(ctx, s.d, s.cfg); err != nil {
		return nil, err
	}
	if _, err := s.sampleDispatch(ctx); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	start := time.Now()
	s.wg.Go(func() { s.load.run(runCtx, s.rate) })
	s.wg.Go(func() { s.maint.run(runCtx) })
	if s.cfg.OpenSnapshot > 0 {
		s.wg.Go(func() { s.snapshotErr = s.holdSnapshot(runCtx, start) })
	}

	var rows []soakRow
	tick := time.NewTicker(s.cfg.SampleEvery)
	defer tick.Stop()
	for len(rows) < int(s.cfg.Duration/s.cfg.SampleEvery) {
		select {
		case <-ctx.Done():
			return rows, ctx.Err()
		case <-tick.C:
		}
		row, err := s.sample(ctx, time.Since(start))
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
		fmt.Fprintf(s.r.progress, "%s\n", row.progressLine())
		for _, p := range s.d.procs {
			if !p.alive() {
				return rows, fmt.Errorf("%s ended: %s\n%s", p.name, p.state(), p.logTail())
			}
		}
	}
	s.stop()
	return rows, s.snapshotErr
}

// stop ends the load, the maintenance and the snapshot.
func (s *soak) stop() {
	s.stopOnce.Do(func() {
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
		if s.maint != nil {
			s.maint.close()
		}
	})
}

// holdSnapshot opens a transaction that keeps a snapshot (REPEATABLE READ,
// after its first read) from OpenSnapshotAt to OpenSnapshotAt +
// OpenSnapshot: what a long report or pg_dump does to the horizon below
// which vacuum may remove dead tuples. It reads idempotency_requests only,
// so it holds no lock that the partition maintenance would wait for.
func (s *soak) holdSnapshot(ctx context.Context, start time.Time) error {
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(time.Until(start.Add(s.cfg.OpenSnapshotAt))):
	}
	db, err := sql.Open("pgx", s.d.db.SuperuserDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM idempotency_requests`).Scan(&n); err != nil {
		return err
	}
	s.snapshotOpen.Store(true)
	s.snapshotSeen.Store(true)
	fmt.Fprintf(s.r.progress, "== snapshot open for %s\n", s.cfg.OpenSnapshot)
	select {
	case <-ctx.Done():
	case <-time.After(s.cfg.OpenSnapshot):
	}
	s.snapshotOpen.Store(false)
	fmt.Fprintln(s.r.progress, "== snapshot closed")
	return nil
}

// sample takes one row.
func (s *soak) sample(ctx context.Context, at time.Duration) (soakRow, error) {
	row := soakRow{At: at, RSS: map[string]float64{}, Goroutines: map[string]float64{}}
	accepted, failed, p99 := s.load.window()
	row.Rate, row.Failed, row.HTTPP99 = float64(accepted)/s.cfg.SampleEvery.Seconds(), failed, p99
	row.Snapshot = s.snapshotSeen.Swap(s.snapshotOpen.Load())
	row.Removed, row.MaintenanceFailure = s.maint.window()

	families, err := s.sampleDispatch(ctx)
	if err != nil {
		return row, err
	}
	row.ClaimP99 = quantileSince(s.prevClaim, histogramOf(families, "once_dispatch_claim_duration_seconds"), 0.99)
	s.prevClaim = histogramOf(families, "once_dispatch_claim_duration_seconds")
	row.DiscoveryP99 = quantileSince(s.prevDiscovery, histogramOf(families, "once_dispatch_discovery_duration_seconds"), 0.99)
	s.prevDiscovery = histogramOf(families, "once_dispatch_discovery_duration_seconds")
	delivery := buckets{}
	for _, name := range soakProcesses {
		f := families
		if name != "dispatch" {
			if f, err = scrape(ctx, s.ops[name]); err != nil {
				return row, err
			}
		}
		row.RSS[name] = gauge(f, "process_resident_memory_bytes")
		row.Goroutines[name] = gauge(f, "go_goroutines")
		// The relay (in serve) and the Dispatcher observe the same
		// histogram, each for the events it published.
		delivery.add(histogramOf(f, "once_dispatch_delivery_latency_seconds"))
	}
	row.DeliveryP99 = quantileSince(s.prevDelivery, delivery, 0.99)
	s.prevDelivery = delivery
	err = s.d.super.QueryRowContext(ctx, soakSizes).Scan(&row.OutboxBytes, &row.LiveBytes, &row.IdempotencyBytes,
		&row.OutboxDead, &row.IdempotencyDead, &row.Partitions)
	row.Load1 = loadAverage()
	return row, err
}

// sampleDispatch scrapes the dispatch process, whose histograms are
// compared sample to sample.
func (s *soak) sampleDispatch(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	f, err := scrape(ctx, s.ops["dispatch"])
	if err == nil && s.prevClaim == nil {
		s.prevClaim = histogramOf(f, "once_dispatch_claim_duration_seconds")
		s.prevDiscovery = histogramOf(f, "once_dispatch_discovery_duration_seconds")
		s.prevDelivery = histogramOf(f, "once_dispatch_delivery_latency_seconds")
		var serve map[string]*dto.MetricFamily
		if serve, err = scrape(ctx, s.ops["serve"]); err == nil {
			s.prevDelivery.add(histogramOf(serve, "once_dispatch_delivery_latency_seconds"))
		}
	}
	return f, err
}

// soakSizes: the sizes (heap, indexes, TOAST) and dead tuples of the two
// tables that must stay flat, the outbox summed over its partitions.
const soakSizes = `
WITH outbox AS (SELECT relid FROM pg_partition_tree('outbox_events') WHERE isleaf)
SELECT (SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM outbox)::bigint,
       pg_total_relation_size('outbox_events_live'),
       pg_total_relation_size('idempotency_requests'),
       (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables WHERE relid IN (SELECT relid FROM outbox))::bigint,
       (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables WHERE relname = 'idempotency_requests')::bigint,
       (SELECT count(*) FROM pg_partition_tree('outbox_events_dispatched') WHERE isleaf AND level = 1)::int - 1`

// loadAverage is the 1-minute load average of the machine (Linux), NaN
// elsewhere.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return math.NaN()
	}
	return f
}
