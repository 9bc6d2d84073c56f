package work

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// progressEvery is how often a wait says where it is.
const progressEvery = 10 * time.Second

// jobsOf is the operations of store verifications with their store, for
// a where clause on o (operations) and s (stores).
const jobsOf = `FROM operations o JOIN stores s ON s.id = o.resource_id WHERE `

// waitEnded polls the database until want operations (where) have ended,
// the worker ends, or timeout passes.
func waitEnded(ctx context.Context, st *stack, progress io.Writer, timeout time.Duration, want int, where string, args ...any) error {
	deadline := time.Now().Add(timeout)
	said := time.Now()
	for {
		var ended int
		// Without jobsOf's join: polled ten times a second, a join of
		// every operation with its store cost the private cluster about
		// 0.1 ms of CPU per job, which the figures charged to once (the
		// River peer's poll is a count of one table).
		if err := st.svc.Super().QueryRowContext(ctx,
			`SELECT count(*) FROM operations o WHERE o.resource_type = 'store' AND o.status IN ('succeeded', 'failed') AND `+where,
			args...).Scan(&ended); err != nil {
			return err
		}
		switch {
		case ended >= want:
			return nil
		case st.deadWorker() != nil:
			return fmt.Errorf("once work ended:\n%s", st.deadWorker().LogTail())
		case time.Now().After(deadline):
			return fmt.Errorf("%d of %d jobs ended within %s", ended, want, timeout)
		case time.Since(said) > progressEvery:
			fmt.Fprintf(progress, "   %d of %d jobs ended\n", ended, want)
			said = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// span is when a set of jobs ended: the first and the last end, and how
// many succeeded and failed.
type span struct {
	first, last       time.Time
	succeeded, failed int
}

func spanOf(ctx context.Context, db *sql.DB, where string, args ...any) (span, error) {
	var s span
	var first, last sql.NullTime
	err := db.QueryRowContext(ctx, `SELECT min(o.updated_at), max(o.updated_at),
		count(*) FILTER (WHERE o.status = 'succeeded'), count(*) FILTER (WHERE o.status = 'failed') `+jobsOf+where, args...).
		Scan(&first, &last, &s.succeeded, &s.failed)
	s.first, s.last = first.Time, last.Time
	return s, err
}

// latency is the jobs' commit→end (operation created to ended), in
// seconds.
type latency struct{ p50, p99 float64 }

func latencyOf(ctx context.Context, db *sql.DB, where string, args ...any) (latency, error) {
	var l latency
	var p50, p99 sql.NullFloat64
	err := db.QueryRowContext(ctx, `SELECT
		percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM o.updated_at - o.created_at)),
		percentile_disc(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM o.updated_at - o.created_at)) `+
		jobsOf+`o.status IN ('succeeded', 'failed') AND `+where, args...).Scan(&p50, &p99)
	l.p50, l.p99 = p50.Float64, p99.Float64
	return l, err
}

// attempts is what the jobs of a destination prefix spent, from the
// outbox: the jobs' own attempts (failures by their own fault), the
// Dispatcher's deliveries, and the dead letters.
type attempts struct {
	jobSum, jobMax, dispatchSum, dispatchMax, deadLetters int
}

func attemptsOf(ctx context.Context, db *sql.DB, destinationLike string) (attempts, error) {
	var a attempts
	err := db.QueryRowContext(ctx, `SELECT coalesce(sum(job_attempts), 0), coalesce(max(job_attempts), 0),
		coalesce(sum(attempt_count), 0), coalesce(max(attempt_count), 0), count(*) FILTER (WHERE status = 'dead_letter')
		FROM outbox_events WHERE destination LIKE $1`, destinationLike).
		Scan(&a.jobSum, &a.jobMax, &a.dispatchSum, &a.dispatchMax, &a.deadLetters)
	return a, err
}

// peakEvery is how often peakSampler scrapes the worker's /metrics. A
// scrape is not free for the worker it measures: it gathers every
// destination's state (one per shop: thousands in throughput), and at
// 50 ms the scrapes were 12 % of the worker's CPU in the throughput
// profile (docs/benchmarks.md, "Where a job's CPU goes").
const peakEvery = 250 * time.Millisecond

// inFlightMetric is the worker's gauge of jobs being handled, by type.
const inFlightMetric = "once_worker_jobs_in_flight"

// peakSampler reads the worker's in-flight gauge every peakEvery until
// stopped and keeps the most it saw (-1: never read).
type peakSampler struct {
	stop chan struct{}
	done chan float64
}

func samplePeak(url string) *peakSampler {
	p := &peakSampler{stop: make(chan struct{}), done: make(chan float64, 1)}
	go func() {
		peak := -1.0
		tick := time.NewTicker(peakEvery)
		defer tick.Stop()
		for {
			if v, err := readMetricSum(url, inFlightMetric, ""); err == nil {
				peak = max(peak, v)
			}
			select {
			case <-p.stop:
				p.done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// peak stops the sampler and returns the most it saw.
func (p *peakSampler) peak() float64 {
	close(p.stop)
	return <-p.done
}

// parks is how many times the workers parked a job in the outbox to
// wait: after a run (once_worker_jobs_total{outcome="waiting"}) and before
// one, refused by its destination's gate (once_worker_job_waits_total).
func parks(st *stack) (float64, error) {
	total := 0.0
	for _, url := range st.metrics {
		for _, m := range []struct{ name, match string }{
			{"once_worker_jobs_total", `outcome="waiting"`},
			{"once_worker_job_waits_total", ""},
		} {
			n, err := readMetricSum(url, m.name, m.match)
			if err != nil && !errors.Is(err, errNoSeries) {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

var errNoSeries = errors.New("no such series")

// readMetricSum sums the series of the metric name whose line holds
// labels ("" for all of them) in the text exposition at url.
func readMetricSum(url, name, labels string) (float64, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // the bench's own worker, sampled until stopped
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum, seen := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") || !strings.Contains(line, labels) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum, seen = sum+v, true
		}
	}
	if !seen {
		return 0, fmt.Errorf("%s: %s{%s}: %w", url, name, labels, errNoSeries)
	}
	return sum, sc.Err()
}
