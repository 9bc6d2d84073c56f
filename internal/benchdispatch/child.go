package benchdispatch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/dispatch"
)

// ChildConfig is one Dispatcher process of a measurement.
type ChildConfig struct {
	Brokers
	AppDSN      string
	Queue       string
	Prefix      string
	Owner       string
	Batch       int
	Concurrency int
}

// RunDispatcherChild is the Dispatcher process of a measurement (the hidden
// `once bench dispatcher-child`): its own pool, LISTEN connection and
// broker connection, as `once dispatch` has. It says "ready" once
// connected, starts dispatching at "go" on stdin, reports "settled N" (the
// events it has claimed and settled so far) after each batch, and at the
// end of stdin stops and reports "rss KB", its peak resident set.
func RunDispatcherChild(ctx context.Context, cfg ChildConfig, stdin io.Reader, stdout io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pool, err := postgres.OpenPool(ctx, cfg.AppDSN, postgres.Pool{
		MaxConns: max(cfg.Concurrency, dispatch.DefaultConcurrency) + 2, MaxIdle: max(cfg.Concurrency, dispatch.DefaultConcurrency) + 2,
		AcquireTimeout: postgres.DefaultAcquireTimeout,
	})
	if err != nil {
		return err
	}
	defer pool.Close()
	pub, err := newBroker(cfg.Queue, cfg.Prefix, cfg.Brokers, log).newPublisher()
	if err != nil {
		return err
	}
	defer pub.Close()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	signal := postgres.NewSignal(runCtx, pool, cfg.AppDSN, log)
	defer signal.Close()
	out := &reporter{w: bufio.NewWriter(stdout)}
	uow := postgres.NewUnitOfWork(pool)
	d, err := dispatch.New(dispatch.Config{Owner: cfg.Owner, Batch: cfg.Batch, Concurrency: cfg.Concurrency}, dispatch.Deps{
		UnitOfWork: uow, Claims: postgres.NewOutboxClaims(uow), Discovery: postgres.NewOutboxDiscovery(pool),
		Publisher: pub, Signal: signal, Clock: system.NewClock(), Logger: log, Observer: out,
	})
	if err != nil {
		return err
	}
	in := bufio.NewScanner(stdin)
	out.line("ready")
	if !in.Scan() || in.Text() != "go" {
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(runCtx)
	}()
	for in.Scan() { // until stdin ends
	}
	stop()
	<-done
	out.line("rss " + strconv.Itoa(peakRSS()))
	return nil
}

// reporter is the child's Observer: it writes what the parent counts.
type reporter struct {
	dispatch.NopObserver
	mu      sync.Mutex
	w       *bufio.Writer
	settled int
}

func (r *reporter) Round(s dispatch.RoundStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled += s.Claimed
	fmt.Fprintf(r.w, "settled %d\n", r.settled)
	_ = r.w.Flush()
}

func (r *reporter) line(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.w, s)
	_ = r.w.Flush()
}

// peakRSS is VmHWM of /proc/self/status in KB (0 where there is none).
func peakRSS() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n
		}
	}
	return 0
}
