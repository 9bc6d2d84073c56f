package delivery

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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
	CPUProfile  string // where to write a CPU profile of the dispatching, if set
}

// RunDispatcherChild is the Dispatcher process of a measurement (the hidden
// `once-bench dispatcher-child`): its own pool, LISTEN connection and
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
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := cpuTime()
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
	out.stats(cpuTime() - cpu0)
	return nil
}

// cpuTime is the CPU time (user and system) this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reporter is the child's Observer: it writes what the parent counts.
type reporter struct {
	dispatch.NopObserver
	mu      sync.Mutex
	w       *bufio.Writer
	settled int
	rounds  int
	sum     dispatch.RoundStats // durations summed over the rounds
}

func (r *reporter) Round(s dispatch.RoundStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled += s.Claimed
	r.rounds++
	r.sum.Claim += s.Claim
	r.sum.Publish += s.Publish
	r.sum.Total += s.Total
	fmt.Fprintf(r.w, "settled %d\n", r.settled)
	_ = r.w.Flush()
}

// stats reports the mean claim, publish and whole-batch times of the
// batches (the wall-clock profile of a batch) and the CPU time used.
func (r *reporter) stats(cpu time.Duration) {
	r.mu.Lock()
	n := max(r.rounds, 1)
	line := fmt.Sprintf("stats batches=%d claim=%.2fms publish=%.2fms batch=%.2fms cpu=%.2fs",
		r.rounds, ms(r.sum.Claim/time.Duration(n)), ms(r.sum.Publish/time.Duration(n)), ms(r.sum.Total/time.Duration(n)), cpu.Seconds())
	r.mu.Unlock()
	r.line(line)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
