package storm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/pgcluster"
)

const (
	// progressEvery is how often a long wait reports on stderr.
	progressEvery = 10 * time.Second
	// cleanupTimeout bounds removing one deployment, also after an
	// interrupt.
	cleanupTimeout = time.Minute
)

// runner is one bench: its configuration, the private cluster, and a
// superuser connection to it that reads pg_stat_activity.
type runner struct {
	cfg      Config
	env      environment
	cluster  *pgcluster.Cluster
	super    *sql.DB
	dir      string
	progress io.Writer
	// version is the private cluster's PostgreSQL version.
	version string
}

// Run runs the scenarios of cfg on a private PostgreSQL cluster it makes and
// removes, prints the table, a line on the targets, one on the columns and
// one on the machine and settings to out, and returns what it measured.
// Progress goes to progress. After a failure the scenarios done so far are
// still printed, and the failed deployment's logs are kept (their
// directory is named on progress).
func Run(ctx context.Context, cfg Config, out, progress io.Writer) (rep Report, err error) {
	if err := cfg.validate(); err != nil {
		return rep, err
	}
	r, settings, err := openRunner(ctx, cfg, progress)
	defer func() { err = r.close(err) }()
	if err != nil {
		return rep, err
	}

	err = r.scenarios(ctx, &rep)
	pool := describePool(settings, cfg.PoolSetting)
	if rows := rep.rows(pool); len(rows) > 0 {
		writeTable(out, rows)
		fmt.Fprintln(out)
		fmt.Fprintln(out, targetsLegend)
		fmt.Fprintln(out)
		fmt.Fprintln(out, columnsLegend)
		fmt.Fprintln(out)
		fmt.Fprintln(out, describe(cfg, settings, r.version, pool))
	}
	return rep, err
}

// openRunner reads the processes' settings and starts the private cluster
// with pgSettings ("name=value" each) beside the bench's own, and reads
// its version.
// The returned runner must be closed (runner.close) even when err is not
// nil.
func openRunner(ctx context.Context, cfg Config, progress io.Writer, pgSettings ...string) (*runner, app.Config, error) {
	r := &runner{cfg: cfg, env: callerEnvironment(), progress: progress}
	settings, err := r.env.config()
	if err != nil {
		return r, settings, err
	}
	if r.dir, err = os.MkdirTemp("", "once-storm-"); err != nil {
		return r, settings, err
	}
	fmt.Fprintf(progress, "== private PostgreSQL cluster (max_connections %d)\n", cfg.MaxConnections)
	r.cluster, err = pgcluster.Start(ctx, cfg.PostgresBin, cfg.MaxConnections, pgSettings...)
	if err != nil {
		return r, settings, fmt.Errorf("private PostgreSQL cluster: %w", err)
	}
	if r.super, err = sql.Open("pgx", r.cluster.SuperuserDSN()); err != nil {
		return r, settings, err
	}
	r.super.SetMaxOpenConns(1)
	err = r.super.QueryRowContext(ctx, `SHOW server_version`).Scan(&r.version)
	return r, settings, err
}

// close removes the private cluster, and the working directory unless err
// says the bench failed (the failed deployment's logs are in it). It
// returns err with what failed on the way.
func (r *runner) close(err error) error {
	if r.super != nil {
		_ = r.super.Close()
	}
	if cerr := r.cluster.Remove(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("remove the private cluster: %w", cerr))
	}
	if err == nil && r.dir != "" {
		_ = os.RemoveAll(r.dir)
	}
	return err
}

// scenarios runs the storm and the replays interleaved, cfg.Repetitions
// times, then the outage and the restart once, each on a deployment of its
// own.
func (r *runner) scenarios(ctx context.Context, rep *Report) error {
	cfg := r.cfg
	for i := 1; i <= cfg.Repetitions; i++ {
		if cfg.runs(ScenarioStorm) {
			if err := r.in(ctx, fmt.Sprintf("storm-%d", i), func(d *deployment) error {
				res, err := runStorm(ctx, r, d, cfg.StormRequests, r.progress)
				rep.Storms = appendOK(rep.Storms, res, err)
				return err
			}); err != nil {
				return err
			}
		}
		if cfg.runs(ScenarioReplays) {
			if err := r.in(ctx, fmt.Sprintf("replays-%d", i), func(d *deployment) error {
				res, err := runReplays(ctx, r, d, cfg.ReplayKeys, cfg.ReplayConcurrency, r.progress)
				rep.Replays = appendOK(rep.Replays, res, err)
				return err
			}); err != nil {
				return err
			}
		}
	}
	if cfg.runs(ScenarioOutage) {
		if err := r.in(ctx, "outage", func(d *deployment) error {
			res, err := runOutage(ctx, r, d, r.progress)
			rep.Outage = appendOK(rep.Outage, res, err)
			return err
		}); err != nil {
			return err
		}
	}
	if cfg.runs(ScenarioRestart) {
		return r.in(ctx, "restart", func(d *deployment) error {
			res, err := runRestart(ctx, r, d, r.progress)
			rep.Restart = appendOK(rep.Restart, res, err)
			return err
		})
	}
	return nil
}

// in runs fn on a fresh deployment and removes it afterwards; a failed
// deployment's logs are kept.
func (r *runner) in(ctx context.Context, label string, fn func(*deployment) error) (err error) {
	fmt.Fprintf(r.progress, "== %s\n", label)
	d, err := newDeployment(ctx, r, label)
	if err == nil {
		err = fn(d)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if cerr := d.close(cctx, err != nil); cerr != nil {
		err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
	}
	if err != nil {
		err = fmt.Errorf("%s: %w (logs in %s)", label, err, d.dir)
	}
	return err
}

func appendOK[R any](runs []R, res R, err error) []R {
	if err != nil {
		return runs
	}
	return append(runs, res)
}

// describePool says what bounds one process's pool, as app.Config reads it.
func describePool(c app.Config, name string) string {
	v, ok := setting(c, name)
	switch {
	case !ok:
		return name + " unbounded (no such setting)"
	case poolLimit(c, name) == 0:
		return name + "=" + v + " (unbounded)"
	default:
		return name + "=" + v
	}
}

// describe is the line that says where and with which settings the figures
// were measured.
func describe(cfg Config, c app.Config, pgVersion, pool string) string {
	return fmt.Sprintf("Machine: %d cores (runtime.NumCPU), %s, PostgreSQL %s (a private cluster, max_connections %d), Redis at %s. "+
		"Settings as the processes read them: %s, ONCE_DISPATCH_MAX_ATTEMPTS=%d, ONCE_DISPATCH_BACKOFF_BASE=%s, ONCE_DISPATCH_BACKOFF_MAX=%s, "+
		"ONCE_DISPATCH_LEASE=%s, ONCE_WORKER_MAX_RETRIES=%d. "+
		"Sizes: storm %d requests; replays %d keys × %d; outage %s and restart with PostgreSQL down %s, producers at %d requests/s "+
		"from %s before the fault to %s after it, drain wait up to %s.",
		runtime.NumCPU(), runtime.Version(), pgVersion, cfg.MaxConnections, redactedRedis(cfg.RedisURL),
		pool, c.DispatchMaxAttempts, c.DispatchBackoffBase, c.DispatchBackoffMax, c.DispatchLease, c.WorkerMaxRetries,
		cfg.StormRequests, cfg.ReplayKeys, cfg.ReplayConcurrency, cfg.Outage, cfg.PostgresDown, cfg.Rate,
		cfg.Around, cfg.Around, cfg.DrainTimeout)
}
