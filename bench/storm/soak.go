package storm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/pgcluster"
)

// SoakConfig is what one `once-bench soak` runs.
type SoakConfig struct {
	// Binary is the once executable the processes run.
	Binary string
	// Duration of the sustained load (after the calibration).
	Duration time.Duration
	// Fraction of the measured capacity the load runs at.
	Fraction float64
	// Calibrate is how long the capacity is measured before the load.
	Calibrate time.Duration
	// SampleEvery is the width of one row of the table.
	SampleEvery time.Duration
	// OpenSnapshot, if not 0, is how long a transaction holds a snapshot
	// open, from OpenSnapshotAt into the load.
	OpenSnapshot, OpenSnapshotAt time.Duration
	// Retention of dispatched events and of idempotency records during the
	// soak, and how often the bench's maintenance removes what expired.
	Retention, CleanupEvery time.Duration
	// PartitionWidth is ONCE_OUTBOX_PARTITION_INTERVAL of the processes.
	PartitionWidth time.Duration

	// Relay is ONCE_RELAY of the processes: true (the default
	// configuration: serve publishes its own events after the commit, the
	// Dispatcher delivers what it could not) or false (every event through
	// the Dispatcher).
	Relay bool

	PostgresBin    string
	MaxConnections int
	RedisURL       string
}

func (c SoakConfig) validate() error {
	var errs []error
	if c.Binary == "" {
		errs = append(errs, errors.New("--once: the once binary is required"))
	}
	if c.Duration < c.SampleEvery || c.SampleEvery <= 0 {
		errs = append(errs, errors.New("--duration must be at least one --sample-every"))
	}
	if c.Fraction <= 0 || c.Fraction > 1 {
		errs = append(errs, errors.New("--fraction must be in (0, 1]"))
	}
	if c.OpenSnapshot > 0 && c.OpenSnapshotAt+c.OpenSnapshot > c.Duration {
		errs = append(errs, errors.New("the open snapshot must end within --duration"))
	}
	if c.Retention <= 0 || c.CleanupEvery <= 0 || c.PartitionWidth < time.Minute {
		errs = append(errs, errors.New("--retention and --cleanup-every must be positive, --partition-width at least 1m"))
	}
	return errors.Join(errs...)
}

// RunSoak measures the capacity of one `once serve` (API only), one
// `once dispatch` and one `once work` on a private cluster, then loads
// them at cfg.Fraction of it for cfg.Duration with the retention on a
// short schedule, and prints one row per cfg.SampleEvery and the steadiness
// checks.
func RunSoak(ctx context.Context, cfg SoakConfig, out, progress io.Writer) (err error) {
	if err := cfg.validate(); err != nil {
		return err
	}
	r, _, err := openRunner(ctx, Config{Binary: cfg.Binary, PostgresBin: cfg.PostgresBin, MaxConnections: cfg.MaxConnections, RedisURL: cfg.RedisURL}, progress)
	defer func() { err = r.close(err) }()
	if err != nil {
		return err
	}
	return r.in(ctx, "soak", func(d *deployment) error {
		s, err := startSoak(ctx, r, d, cfg)
		if err != nil {
			return err
		}
		defer s.stop()
		rows, err := s.run(ctx)
		var end soakEnd
		if err == nil {
			end, err = s.settle(ctx)
		}
		writeSoakTable(out, rows)
		fmt.Fprintln(out)
		writeSoakChecks(out, cfg, rows)
		writeSoakEnd(out, end)
		fmt.Fprintln(out)
		fmt.Fprintln(out, soakLegend)
		fmt.Fprintln(out)
		fmt.Fprintln(out, describeSoak(cfg, s, r.version))
		return err
	})
}

// soakProcesses are the three processes of the soak, each with its ops
// listener on a port of its own (metrics scraped every sample).
var soakProcesses = []string{"serve", "dispatch", "work"}

// startSoak starts the processes with ops listeners the bench scrapes.
func startSoak(ctx context.Context, r *runner, d *deployment, cfg SoakConfig) (*soak, error) {
	s := &soak{r: r, d: d, cfg: cfg, ops: map[string]string{}}
	simURL, err := startSim(ctx, d)
	if err != nil {
		return nil, err
	}
	common := []string{
		"ONCE_OUTBOX_PARTITION_INTERVAL", cfg.PartitionWidth.String(),
		"ONCE_QUEUE", app.QueueRedis,
		// The relay is on by default (a real queue); off, every event goes
		// through the Dispatcher, whose claim then carries the whole load.
		"ONCE_RELAY", relaySetting(cfg.Relay),
		// The platform the workers call in a process of its own, so the
		// worker's memory is the worker's: the in-process simulator keeps
		// every request token it has seen.
		"ONCE_SIM_URL", simURL,
	}
	for _, name := range soakProcesses {
		port, err := pgcluster.FreePort()
		if err != nil {
			return nil, err
		}
		s.ops[name] = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
		env := append([]string{"ONCE_OPS_ADDR", fmt.Sprintf("127.0.0.1:%d", port)}, common...)
		if name == "serve" {
			// The API alone: delivery and jobs in processes of their own,
			// so each one's memory and goroutines show apart.
			if err := d.startServe(ctx, 64, append(env, "ONCE_DISPATCHER", "false", "ONCE_WORKER", "false")...); err != nil {
				return nil, err
			}
			// startServe set the ops address before its own free port.
			d.procs[len(d.procs)-1].name = "serve"
			continue
		}
		p, err := d.start(name, env...)
		if err != nil {
			return nil, err
		}
		_ = p
	}
	return s, nil
}

func relaySetting(on bool) string {
	if on {
		return app.RelayOn
	}
	return app.RelayOff
}

// startSim starts `once sim` with flags (its ledger in the deployment's
// directory) and returns its URL once it accepts connections.
func startSim(ctx context.Context, d *deployment, flags ...string) (string, error) {
	port, err := pgcluster.FreePort()
	if err != nil {
		return "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := d.startArgs("sim", append([]string{"sim"}, flags...), "ONCE_SIM_ADDR", addr, "ONCE_SIM_LEDGER", filepath.Join(d.dir, "sim.ledger"))
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(readyTimeout)
	for {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = c.Close()
			return "http://" + addr, nil
		}
		switch {
		case !p.alive():
			return "", fmt.Errorf("once sim ended (%s):\n%s", p.state(), p.logTail())
		case time.Now().After(deadline):
			return "", fmt.Errorf("once sim did not listen within %s:\n%s", readyTimeout, p.logTail())
		case ctx.Err() != nil:
			return "", ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
}
