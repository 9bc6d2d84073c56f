package storm

import (
	"context"
	"fmt"
	"io"
	"time"
)

// restartResult is one run of the PostgreSQL restart.
type restartResult struct {
	// Down is from the stop command to the server accepting connections
	// again.
	Down time.Duration
	// Recovered says a request was accepted after the restart; Recovery is
	// how long after the server was back that took.
	Recovered bool
	Recovery  time.Duration
	loadRun
}

// runRestart runs the split service on the private cluster and Redis, and
// under load stops the cluster (fast: every session ends), keeps it down
// cfg.PostgresDown, and starts it again. No process is restarted or helped
// by the bench.
func runRestart(ctx context.Context, r *runner, d *deployment, progress io.Writer) (restartResult, error) {
	cfg := r.cfg
	var res restartResult
	if err := startSplit(ctx, d, cfg.RedisURL); err != nil {
		return res, err
	}
	var stopped, up time.Time
	run, p, err := underLoad(ctx, r, d, progress, func() (time.Time, error) {
		stopped = time.Now()
		fmt.Fprintf(progress, "[%s] stopping PostgreSQL for %s\n", d.label, cfg.PostgresDown)
		if err := r.cluster.Stop(ctx); err != nil {
			return time.Time{}, err
		}
		if err := sleep(ctx, cfg.PostgresDown); err != nil {
			return time.Time{}, err
		}
		if err := r.cluster.Start(ctx); err != nil {
			return time.Time{}, err
		}
		up = time.Now()
		fmt.Fprintf(progress, "[%s] PostgreSQL back after %s\n", d.label, up.Sub(stopped).Round(time.Millisecond))
		return up, nil
	})
	res.loadRun = run
	if err != nil {
		return res, err
	}
	res.Down = up.Sub(stopped)
	if at, ok := p.firstAcceptedAfter(stopped); ok {
		res.Recovered, res.Recovery = true, max(0, at.Sub(up))
	}
	fmt.Fprintf(progress, "[%s] first request accepted %s after PostgreSQL was back (recovered: %t)\n",
		d.label, res.Recovery.Round(time.Millisecond), res.Recovered)
	return res, nil
}
