package benchdispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/internal/pgsandbox"
)

// cleanupTimeout bounds dropping a run's database and broker topics, which
// also happens after an interrupt.
const cleanupTimeout = 30 * time.Second

// progressEvery is how often a run reports progress on stderr.
const progressEvery = 2 * time.Second

// dispatcherProcess is what one Dispatcher instance owns, as a separate
// process would: its pool, its LISTEN connection (Signal) and its broker
// connection.
type dispatcherProcess struct {
	pool   *bun.DB
	signal *postgres.Signal
	pub    publisher
}

func (p *dispatcherProcess) close() {
	if p.signal != nil {
		_ = p.signal.Close()
	}
	if p.pub != nil {
		_ = p.pub.Close()
	}
	if p.pool != nil {
		_ = p.pool.Close()
	}
}

// runOne measures one publisher with k Dispatcher instances, on a database
// and broker prefix of its own that it removes before returning.
func runOne(ctx context.Context, cfg Config, kind string, k int, progress io.Writer) (res Result, err error) {
	label := fmt.Sprintf("%s × %d", kind, k)
	// Dispatcher and Signal logs go to stderr; silenced while shutting down,
	// when cut-short rounds would log errors that mean nothing.
	var level slog.LevelVar
	level.Set(slog.LevelWarn)
	quiet := func() { level.Set(slog.LevelError + 4) }
	defer context.AfterFunc(ctx, quiet)()
	log := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: &level}))
	clock := system.NewClock()

	// Cleanups run last to first: the database and broker topics go once
	// every connection is closed.
	var cleanups []func(context.Context) error
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		for i := len(cleanups) - 1; i >= 0; i-- {
			if cerr := cleanups[i](cctx); cerr != nil {
				err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
			}
		}
	}()

	db, err := pgsandbox.Create(ctx, cfg.SuperuserURL, "once_bench")
	cleanups = append(cleanups, db.Drop)
	if err != nil {
		return res, fmt.Errorf("database %s: %w", db.Name, err)
	}
	suffix := strings.TrimPrefix(db.Name, "once_bench_")
	brk := newBroker(kind, "once-bench-"+suffix+".", cfg, log)
	cleanups = append(cleanups, brk.cleanup)

	producerPool, err := postgres.Open(ctx, db.AppDSN)
	if err != nil {
		return res, err
	}
	cleanups = append(cleanups, func(context.Context) error { return producerPool.Close() })
	workspaces, err := createWorkspaces(ctx, postgres.NewUnitOfWork(producerPool), clock, cfg.Workspaces)
	if err != nil {
		return res, err
	}
	rec := newRecorder(cfg.Events)

	// Everything that runs in the background stops here, before the pools
	// close.
	runCtx, stop := context.WithCancel(ctx)
	var bg sync.WaitGroup
	processes := make([]*dispatcherProcess, 0, k)
	cleanups = append(cleanups, func(context.Context) error {
		quiet()
		stop()
		bg.Wait()
		for _, p := range processes {
			p.close()
		}
		return nil
	})

	for i := range k {
		p := &dispatcherProcess{}
		processes = append(processes, p)
		if p.pool, err = postgres.Open(ctx, db.AppDSN); err != nil {
			return res, err
		}
		if p.pub, err = brk.newPublisher(); err != nil {
			return res, fmt.Errorf("%s publisher: %w", kind, err)
		}
		p.signal = postgres.NewSignal(runCtx, p.pool, db.AppDSN, log)
		d, err := dispatch.New(dispatch.Config{
			Owner: fmt.Sprintf("bench-%s-%d", suffix, i+1),
			Batch: cfg.Batch,
		}, dispatch.Deps{
			UnitOfWork: postgres.NewUnitOfWork(p.pool),
			Discovery:  postgres.NewOutboxDiscovery(p.pool),
			Publisher:  recordingPublisher{next: p.pub, rec: rec},
			Signal:     p.signal,
			Clock:      clock,
			Logger:     log,
		})
		if err != nil {
			return res, err
		}
		bg.Go(func() { d.Run(runCtx) })
	}

	// The producers' process: its commits wake the Dispatchers through one
	// coalesced NOTIFY after commit, as `once serve` does.
	producerSignal := postgres.NewSignal(runCtx, producerPool, db.AppDSN, log)
	cleanups = append(cleanups, func(context.Context) error { return producerSignal.Close() })
	uow := dispatch.NotifyOnCommit(postgres.NewUnitOfWork(producerPool), producerSignal)

	// Let the LISTEN connections come up before the clock starts.
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
		return res, ctx.Err()
	}

	fmt.Fprintf(progress, "[%s] producing %d events (%d per transaction, %d producers, %d workspaces)\n",
		label, cfg.Events, cfg.EventsPerTx, cfg.Producers, cfg.Workspaces)
	started := time.Now()
	produced := make(chan error, 1)
	bg.Go(func() {
		produced <- produce(runCtx, uow, clock, workspaces, rec, cfg.Producers, cfg.EventsPerTx)
	})
	deadline := time.NewTimer(cfg.Timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
	producing, accepting := true, true
	for producing || accepting {
		select {
		case perr := <-produced:
			if perr != nil {
				return res, perr
			}
			producing = false
			took := time.Since(started)
			fmt.Fprintf(progress, "[%s] committed %d events in %s (%.0f events/s)\n",
				label, cfg.Events, took.Round(time.Millisecond), float64(cfg.Events)/took.Seconds())
		case <-rec.Done():
			accepting = false
		case <-ticker.C:
			fmt.Fprintf(progress, "[%s] committed %d/%d, accepted %d/%d\n",
				label, rec.committed.Load(), cfg.Events, rec.accepted.Load(), cfg.Events)
		case <-deadline.C:
			return res, fmt.Errorf("timed out after %s: %d of %d events committed, %d accepted by %s; the Dispatchers did not keep up or the broker is not accepting (see the logs above)",
				cfg.Timeout, rec.committed.Load(), cfg.Events, rec.accepted.Load(), kind)
		case <-ctx.Done():
			return res, fmt.Errorf("interrupted: %w", ctx.Err())
		}
	}
	if n := rec.foreign.Load(); n > 0 {
		return res, fmt.Errorf("the broker accepted %d events this run did not produce", n)
	}
	res = summarize(kind, k, rec)
	fmt.Fprintf(progress, "[%s] every event accepted: %.0f events/s, p50 %s, p99 %s, %d duplicates\n",
		label, res.EventsPerSecond, ms(res.P50), ms(res.P99), res.Duplicates)
	return res, nil
}
