package storm

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/oncehq/once/app"
)

// retryGrace is how long the producers' requests in flight may keep
// retrying once the load phase ends.
const retryGrace = time.Minute

// startSplit starts the service split as docs/configuration.md recommends
// for a real broker: `once serve` with the API only, one `once dispatch`
// and one `once work`, the latter two reaching Redis at brokerURL.
func startSplit(ctx context.Context, d *deployment, brokerURL string) error {
	if err := d.startServe(ctx, maxInFlight, "ONCE_QUEUE", app.QueueRedis, "ONCE_DISPATCHER", "false", "ONCE_WORKER", "false"); err != nil {
		return err
	}
	for _, command := range []string{"dispatch", "work"} {
		if _, err := d.start(command, "ONCE_QUEUE", app.QueueRedis, "ONCE_REDIS_URL", brokerURL); err != nil {
			return err
		}
	}
	return nil
}

// loadRun is what a fault under load measured: the producers' requests,
// and once they finished and the bench waited up to cfg.DrainTimeout for
// the backlog, where the work stands and how the processes are.
type loadRun struct {
	producerFigures
	// Executions are stores created.
	Executions int
	Backlog    backlog
	Drained    bool
	// Drain is from the end of the fault to the backlog drained (or to the
	// end of the wait).
	Drain     time.Duration
	Processes []processState
	Conns     connPeak
}

// underLoad runs producers at cfg.Rate against d for cfg.Around, then
// fault, which returns when the fault has ended, then cfg.Around more;
// then it waits for the backlog. The producers are returned for questions
// about when requests were accepted.
func underLoad(ctx context.Context, r *runner, d *deployment, progress io.Writer,
	fault func() (ended time.Time, err error),
) (loadRun, *producers, error) {
	var res loadRun
	s := sampleConnections(r.super, d.db.AppRole)
	defer s.finish()
	p := startProducers(d.api, r.cfg.Rate)
	defer p.finish(0)
	if err := sleep(ctx, r.cfg.Around); err != nil {
		return res, p, err
	}
	ended, err := fault()
	if err != nil {
		return res, p, err
	}
	if err := sleep(ctx, r.cfg.Around); err != nil {
		return res, p, err
	}
	p.finish(retryGrace)
	res.producerFigures = p.figures()

	res.Backlog, res.Drained, err = waitDrained(ctx, d.super, time.Now().Add(r.cfg.DrainTimeout), func(b backlog) {
		fmt.Fprintf(progress, "[%s] draining: %d events, %d delivered, %d waiting, %d dead letters\n",
			d.label, b.Events, b.Delivered, b.Waiting, b.DeadLetters)
	})
	res.Drain = time.Since(ended)
	res.Conns = s.finish()
	if err != nil {
		return res, p, err
	}
	if res.Executions, err = d.count(ctx, `SELECT count(*) FROM stores`); err != nil {
		return res, p, err
	}
	res.Processes = states(d.procs)
	fmt.Fprintf(progress, "[%s] %d of %d requests accepted; %d events: %d delivered, %d dead letters, %d waiting, %d lost; "+
		"max attempts %d; drained %t, %s after the fault; processes %v\n",
		d.label, res.Accepted, res.Requests, res.Backlog.Events, res.Backlog.Delivered, res.Backlog.DeadLetters,
		res.Backlog.Waiting, res.Backlog.Lost(), res.Backlog.MaxAttempts, res.Drained, res.Drain.Round(time.Millisecond), res.Processes)
	return res, p, nil
}
