package benchstorm

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
	producerFigures
	afterLoad
	Conns connPeak
}

// runRestart runs the API, a Dispatcher and a worker as separate processes
// on the private cluster and Redis. Producers create stores at cfg.Rate;
// after cfg.Around the cluster is stopped (fast: every session ends), kept
// down cfg.PostgresDown, and started again; the producers go on for
// cfg.Around, then the bench waits for the backlog to drain. No process is
// restarted or helped by the bench.
func runRestart(ctx context.Context, r *runner, d *deployment, progress io.Writer) (restartResult, error) {
	cfg := r.cfg
	var res restartResult
	if err := startSplit(ctx, d, cfg.RedisURL); err != nil {
		return res, err
	}

	s := sampleConnections(r.super, d.db.AppRole)
	defer s.finish()
	p := startProducers(d.api, cfg.Rate)
	defer p.finish(0)
	if err := sleep(ctx, cfg.Around); err != nil {
		return res, err
	}
	stopped := time.Now()
	fmt.Fprintf(progress, "[%s] stopping PostgreSQL for %s\n", d.label, cfg.PostgresDown)
	if err := r.cluster.stop(ctx); err != nil {
		return res, err
	}
	if err := sleep(ctx, cfg.PostgresDown); err != nil {
		return res, err
	}
	if err := r.cluster.start(ctx); err != nil {
		return res, err
	}
	up := time.Now()
	res.Down = up.Sub(stopped)
	fmt.Fprintf(progress, "[%s] PostgreSQL back after %s\n", d.label, res.Down.Round(time.Millisecond))
	if err := sleep(ctx, cfg.Around); err != nil {
		return res, err
	}
	p.finish(retryGrace)
	res.producerFigures = p.figures()
	if at, ok := p.firstAcceptedAfter(stopped); ok {
		res.Recovered, res.Recovery = true, max(0, at.Sub(up))
	}

	fmt.Fprintf(progress, "[%s] first request accepted %s after PostgreSQL was back (recovered: %t); %d of %d requests accepted\n",
		d.label, res.Recovery.Round(time.Millisecond), res.Recovered, res.Accepted, res.Requests)
	var err error
	res.afterLoad, err = waitAfterLoad(ctx, d, up, cfg.DrainTimeout, progress)
	res.Conns = s.finish()
	return res, err
}
