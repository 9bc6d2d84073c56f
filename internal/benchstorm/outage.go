package benchstorm

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/oncehq/once/internal/faultproxy"
)

// retryGrace is how long the producers' requests in flight may keep
// retrying once the load phase ends.
const retryGrace = time.Minute

// outageResult is one run of the broker outage.
type outageResult struct {
	Outage time.Duration
	producerFigures
	afterLoad
	Conns connPeak
}

// runOutage runs the API, a Dispatcher and a worker as separate processes,
// the latter two reaching Redis through a fault proxy. Producers create
// stores at cfg.Rate from before the cut until after the broker is back;
// the cut lasts cfg.Outage. Then it waits for the backlog to drain.
func runOutage(ctx context.Context, r *runner, d *deployment, progress io.Writer) (outageResult, error) {
	cfg := r.cfg
	res := outageResult{Outage: cfg.Outage}
	target, err := redisAddress(cfg.RedisURL)
	if err != nil {
		return res, err
	}
	proxy, err := faultproxy.Listen(target)
	if err != nil {
		return res, err
	}
	defer proxy.Down()
	viaProxy, err := redisVia(cfg.RedisURL, proxy.Addr())
	if err != nil {
		return res, err
	}
	if err := startSplit(ctx, d, viaProxy); err != nil {
		return res, err
	}

	s := sampleConnections(r.super, d.db.AppRole)
	defer s.finish()
	p := startProducers(d.api, cfg.Rate)
	defer p.finish(0)
	if err := sleep(ctx, cfg.Around); err != nil {
		return res, err
	}
	proxy.Down()
	fmt.Fprintf(progress, "[%s] broker cut for %s\n", d.label, cfg.Outage)
	if err := sleepReporting(ctx, cfg.Outage, func() {
		b, _ := readBacklog(ctx, d.super)
		fmt.Fprintf(progress, "[%s] broker down: %d events, %d waiting, %d dead letters, max attempts %d\n",
			d.label, b.Events, b.Waiting, b.DeadLetters, b.MaxAttempts)
	}); err != nil {
		return res, err
	}
	if err := proxy.Restore(); err != nil {
		return res, err
	}
	restored := time.Now()
	fmt.Fprintf(progress, "[%s] broker back\n", d.label)
	if err := sleep(ctx, cfg.Around); err != nil {
		return res, err
	}
	p.finish(retryGrace)
	res.producerFigures = p.figures()

	res.afterLoad, err = waitAfterLoad(ctx, d, restored, cfg.DrainTimeout, progress)
	res.Conns = s.finish()
	return res, err
}
