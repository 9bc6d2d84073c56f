package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

// cleanupTimeout bounds dropping a measurement's database and broker
// topics, which also happens after an interrupt.
const cleanupTimeout = 30 * time.Second

// Measurement is one repetition of one variant, and one line of --json.
type Measurement struct {
	Bench        string  `json:"bench"`
	Variant      string  `json:"variant"` // once (Dispatcher processes), raw (claim+mark only) or bare (amqp091 alone)
	Queue        string  `json:"queue,omitempty"`
	Dispatchers  int     `json:"dispatchers,omitempty"`
	Clients      int     `json:"clients,omitempty"`
	Rep          int     `json:"rep"`
	Events       int     `json:"events"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
	// PeakRSSKB is the largest peak resident set of the Dispatcher
	// processes (drain, variant once).
	PeakRSSKB int64 `json:"peak_rss_kb,omitempty"`
	// Latencies, commit → seen by the consumer (steady), in milliseconds.
	P50Ms float64 `json:"p50_ms,omitempty"`
	P99Ms float64 `json:"p99_ms,omitempty"`
	MaxMs float64 `json:"max_ms,omitempty"`
	Rate  float64 `json:"rate,omitempty"` // achieved commit rate (steady)
	// BacklogLeft is how many of the noisy workspace's events were still
	// not dispatched when the quiet ones' last event was (fairness).
	BacklogLeft int `json:"backlog_left,omitempty"`
}

// variant is one thing measured in every repetition.
type variant struct {
	queue   string // "" for raw
	workers int    // Dispatchers or raw clients
	bare    bool   // the broker alone, without once (AMQP; see drainBareAMQP)
}

func (v variant) String() string {
	if v.queue == "" {
		return fmt.Sprintf("raw claim+mark × %d client(s)", v.workers)
	}
	if v.bare {
		return fmt.Sprintf("bare amqp091 publisher, %d channel(s)", v.workers)
	}
	return fmt.Sprintf("once → %s × %d dispatcher(s)", v.queue, v.workers)
}

// RunDrain measures the drain of cfg.Events preloaded events, every variant
// once per repetition, interleaved, and prints a table (or JSON lines) to
// out. Progress goes to progress.
func RunDrain(ctx context.Context, cfg DrainConfig, out, progress io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.Events < 1 {
		return errors.New("events must be positive")
	}
	var variants []variant
	for _, k := range cfg.Clients {
		variants = append(variants, variant{workers: k})
	}
	for _, q := range cfg.Queues {
		for _, k := range cfg.Dispatchers {
			variants = append(variants, variant{queue: q, workers: k})
		}
		if q == PublisherAMQP {
			// What the broker itself does with the same messages, as many
			// batches in flight as one Dispatcher has.
			variants = append(variants, variant{queue: q, workers: concurrencyOf(cfg.Common), bare: true})
		}
	}
	version, err := serverVersion(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	all, runErr := repeat(cfg.Common, out, variants, func(rep int, v variant) (Measurement, error) {
		fmt.Fprintf(progress, "== rep %d/%d: %s\n", rep, cfg.Reps, v)
		m, err := inSandbox(ctx, cfg.Common, func(s *sandbox) (Measurement, error) {
			return drainOne(ctx, s, cfg, v, rep, progress)
		})
		if err != nil {
			return m, fmt.Errorf("rep %d, %s: %w", rep, v, err)
		}
		fmt.Fprintf(progress, "   %d events in %.2fs: %.0f events/s", m.Events, m.Seconds, m.EventsPerSec)
		if m.PeakRSSKB > 0 {
			fmt.Fprintf(progress, ", peak RSS %.1f MB", float64(m.PeakRSSKB)/1024)
		}
		fmt.Fprintln(progress)
		return m, nil
	})
	writeReport(out, cfg.Common, all, version, func() { writeDrainTable(out, cfg, all) }, fmt.Sprintf(
		"%d events over %d workspaces (about 80-byte payloads) preloaded per measurement into a fresh database; batch %d, Dispatcher concurrency %d; "+
			"Dispatchers are processes of their own; raw is the same claim and mark (a pgx batch each, as the app role under RLS) from Go, no publish; "+
			"%d repetitions interleaved",
		cfg.Events, cfg.Workspaces, cfg.Batch, concurrencyOf(cfg.Common), cfg.Reps))
	return runErr
}

// repeat measures every item once per repetition, interleaved (rep 1 of
// each, then rep 2, ...), printing each measurement as a JSON line when
// asked; it stops at the first error and returns what it measured.
func repeat[T any](cfg Common, out io.Writer, items []T, measure func(rep int, item T) (Measurement, error)) ([]Measurement, error) {
	var all []Measurement
	for rep := 1; rep <= cfg.Reps; rep++ {
		for _, item := range items {
			m, err := measure(rep, item)
			if err != nil {
				return all, err
			}
			all = append(all, m)
			if cfg.JSON {
				writeJSON(out, m)
			}
		}
	}
	return all, nil
}

func concurrencyOf(c Common) int {
	if c.Concurrency == 0 {
		return dispatch.DefaultConcurrency
	}
	return c.Concurrency
}

// sandbox is a fresh database with workspaces, torn down by close.
type sandbox struct {
	db         *pgsandbox.Sandbox
	super      *bun.DB // the sandbox database as the superuser (no RLS)
	workspaces []uuid.UUID
	suffix     string
	cleanups   []func(context.Context) error
}

func newSandbox(ctx context.Context, cfg Common) (*sandbox, error) {
	s := &sandbox{}
	db, err := pgsandbox.Create(ctx, cfg.DatabaseURL, "once_bench")
	s.db = db
	s.cleanups = append(s.cleanups, db.Drop)
	if err != nil {
		return s, fmt.Errorf("database %s: %w", db.Name, err)
	}
	s.suffix = strings.TrimPrefix(db.Name, "once_bench_")
	super, err := postgres.Open(ctx, db.SuperuserDSN())
	if err != nil {
		return s, err
	}
	s.super = super
	s.cleanups = append(s.cleanups, func(context.Context) error { return super.Close() })
	uow := postgres.NewUnitOfWork(db.App)
	clock := system.NewClock()
	for i := range cfg.Workspaces {
		id := uuid.Must(uuid.NewV7())
		w := model.Workspace{ID: id, Name: fmt.Sprintf("bench %d", i+1), CreatedAt: clock.Now()}
		if err := uow.Transact(ctx, id, func(ctx context.Context, tx ports.Tx) error {
			return tx.Workspaces().Create(ctx, w)
		}); err != nil {
			return s, fmt.Errorf("create workspace %d: %w", i+1, err)
		}
		s.workspaces = append(s.workspaces, id)
	}
	return s, nil
}

// close runs the cleanups, last first, even after an interrupt.
func (s *sandbox) close(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		if err := s.cleanups[i](cctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// preload inserts n pending events spread evenly over the workspaces, due
// a minute ago, with about 80-byte payloads, as the superuser in one
// statement, then VACUUM ANALYZE so the drain starts on settled statistics
// and a set visibility map, as a table that has been live for a while.
func (s *sandbox) preload(ctx context.Context, n int) error {
	return s.preloadInto(ctx, n, s.workspaces, EventType)
}

// preloadInto is preload into the given workspaces, of eventType.
func (s *sandbox) preloadInto(ctx context.Context, n int, workspaces []uuid.UUID, eventType string) error {
	ws := make([]string, len(workspaces))
	for i, id := range workspaces {
		ws[i] = id.String()
	}
	_, err := s.super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload,
                           next_attempt_at, created_at)
SELECT gen_random_uuid(), (?::uuid[])[1 + i % ?], ?, 'bench', gen_random_uuid(),
       jsonb_build_object('n', i, 'pad', repeat('x', ?)),
       now() - interval '1 minute', now() - interval '1 minute'
  FROM generate_series(0, ? - 1) AS i`,
		pgdialect.Array(ws), len(ws), eventType, payloadPad, n)
	if err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	_, err = s.super.ExecContext(ctx, `VACUUM ANALYZE outbox_events`)
	return err
}

// dispatched counts the events marked dispatched.
func (s *sandbox) dispatched(ctx context.Context) (int, error) {
	var n int
	err := s.super.QueryRowContext(ctx, `SELECT count(*) FROM outbox_events WHERE status = 'dispatched'`).Scan(&n)
	return n, err
}

// inSandbox runs measure on a fresh sandbox, then removes the sandbox; an
// error of the removal joins measure's.
func inSandbox(ctx context.Context, cfg Common, measure func(s *sandbox) (Measurement, error)) (m Measurement, err error) {
	s, err := newSandbox(ctx, cfg)
	defer func() {
		if cerr := s.close(ctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
		}
	}()
	if err != nil {
		return m, err
	}
	return measure(s)
}

func drainOne(ctx context.Context, s *sandbox, cfg DrainConfig, v variant, rep int, progress io.Writer) (m Measurement, err error) {
	m = Measurement{Bench: "drain", Rep: rep, Events: cfg.Events}
	if v.bare {
		prefix := "once-bench-" + s.suffix + "."
		brk := newBroker(v.queue, prefix, cfg.Brokers, nil)
		s.cleanups = append(s.cleanups, brk.cleanup)
		m.Variant, m.Queue, m.Clients = "bare", v.queue, v.workers
		took, err := drainBareAMQP(ctx, cfg, prefix, cfg.Events, v.workers)
		m.Seconds, m.EventsPerSec = took.Seconds(), float64(cfg.Events)/took.Seconds()
		return m, err
	}
	if err := s.preload(ctx, cfg.Events); err != nil {
		return m, err
	}
	var took time.Duration
	if v.queue == "" {
		m.Variant, m.Clients = "raw", v.workers
		took, err = drainRaw(ctx, cfg, s, v.workers)
	} else {
		m.Variant, m.Queue, m.Dispatchers = "once", v.queue, v.workers
		took, m.PeakRSSKB, err = drainOnce(ctx, cfg, s, v, rep, progress)
	}
	if err != nil {
		return m, err
	}
	n, err := s.dispatched(ctx)
	if err != nil {
		return m, err
	}
	if n != cfg.Events {
		return m, fmt.Errorf("%d of %d events dispatched at the end", n, cfg.Events)
	}
	m.Seconds = took.Seconds()
	m.EventsPerSec = float64(cfg.Events) / took.Seconds()
	return m, nil
}

// drainRaw claims and marks the backlog with the Dispatcher's own
// statements (postgres.OutboxClaims: one pgx batch each, as the app role
// under RLS) from k clients, each with its own connection, going round the
// workspaces (client i starting at workspace i) until a whole turn claims
// nothing. No discovery, no publish: the database's limit for this work.
func drainRaw(ctx context.Context, cfg DrainConfig, s *sandbox, k int) (time.Duration, error) {
	pool, err := postgres.OpenPool(ctx, s.db.AppDSN, postgres.Pool{MaxConns: k, MaxIdle: k, AcquireTimeout: time.Minute})
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	claims := postgres.NewOutboxClaims(postgres.NewUnitOfWork(pool, postgres.WithAcquireTimeout(time.Minute)))
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, k)
	start := time.Now()
	for c := range k {
		wg.Go(func() {
			owner := fmt.Sprintf("raw-%s-%d", s.suffix, c)
			empty := 0
			for i := c; empty < len(s.workspaces); i++ {
				ws := s.workspaces[i%len(s.workspaces)]
				claim, err := claims.ClaimDue(ctx, ws, owner, time.Now(), dispatch.DefaultLease, cfg.Batch, dispatch.DefaultMaxAttempts)
				if err != nil {
					errs[c] = err
					return
				}
				if len(claim.Events) == 0 {
					empty++
					continue
				}
				empty = 0
				ids := make([]uuid.UUID, len(claim.Events))
				for j, e := range claim.Events {
					ids[j] = e.ID
				}
				if _, err := claims.MarkDispatched(ctx, ws, owner, ids, time.Now()); err != nil {
					errs[c] = err
					return
				}
				total.Add(int64(len(ids)))
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	return took, errors.Join(errs...)
}

// drainOnce starts k Dispatcher processes, lets them connect, starts them
// together and times until they settled the whole backlog.
func drainOnce(ctx context.Context, cfg DrainConfig, s *sandbox, v variant, rep int, progress io.Writer) (time.Duration, int64, error) {
	prefix := "once-bench-" + s.suffix + "."
	brk := newBroker(v.queue, prefix, cfg.Brokers, nil)
	s.cleanups = append(s.cleanups, brk.cleanup)
	changed := make(chan struct{}, 1)
	var profile string
	if cfg.ProfileDir != "" {
		profile = filepath.Join(cfg.ProfileDir, fmt.Sprintf("dispatcher-%s-%d-rep%d", v.queue, v.workers, rep))
	}
	children, err := startChildren(ctx, cfg.Common, s, v.queue, prefix, v.workers, changed, profile)
	defer stopChildren(children, nil)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	for _, c := range children {
		if err := c.start(); err != nil {
			return 0, 0, err
		}
	}
	deadline := time.NewTimer(cfg.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		var settled int64
		for _, c := range children {
			settled += c.settled.Load()
		}
		if settled >= int64(cfg.Events) {
			break
		}
		select {
		case <-changed:
		case <-tick.C:
			fmt.Fprintf(progress, "   settled %d/%d\n", settled, cfg.Events)
		case <-deadline.C:
			return 0, 0, fmt.Errorf("timed out after %s: %d of %d events settled", cfg.Timeout, settled, cfg.Events)
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	took := time.Since(start)
	rss, err := stopChildren(children, progress)
	return took, rss, err
}

// startChildren starts k Dispatcher processes on s and waits until each is
// connected; changed hears every progress report.
// profile, if set, is the path prefix of each process's CPU profile.
func startChildren(ctx context.Context, cfg Common, s *sandbox, queue, prefix string, k int, changed chan struct{}, profile string) ([]*child, error) {
	var children []*child
	for i := range k {
		var cpuProfile string
		if profile != "" {
			cpuProfile = fmt.Sprintf("%s-%d.pprof", profile, i+1)
		}
		c, err := startChild(ctx, cfg.Binary, ChildConfig{
			Brokers: cfg.Brokers, AppDSN: s.db.AppDSN, Queue: queue, Prefix: prefix,
			Owner: fmt.Sprintf("bench-%s-%d", s.suffix, i+1), Batch: cfg.Batch, Concurrency: cfg.Concurrency,
			CPUProfile: cpuProfile,
		}, changed)
		if err != nil {
			return children, err
		}
		children = append(children, c)
	}
	for _, c := range children {
		select {
		case <-c.ready:
		case <-c.exited:
			return children, fmt.Errorf("a dispatcher process ended before it was ready: %v", c.err)
		case <-ctx.Done():
			return children, ctx.Err()
		}
	}
	return children, nil
}

// stopChildren stops the Dispatcher processes (again: no-op), prints their
// batch statistics to progress (if not nil) and returns their largest peak
// RSS.
func stopChildren(children []*child, progress io.Writer) (int64, error) {
	var rss int64
	var errs []error
	for i, c := range children {
		if err := c.stop(); err != nil {
			errs = append(errs, fmt.Errorf("dispatcher process: %w", err))
		}
		rss = max(rss, c.rss.Load())
		if st := c.stats.Load(); st != nil && progress != nil {
			fmt.Fprintf(progress, "   dispatcher %d: %s\n", i+1, *st)
		}
	}
	return rss, errors.Join(errs...)
}
