package benchstorm

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/oncehq/once/app"
)

// startSplit starts the service split as the README recommends for a real
// broker: `once serve` with the API only, one `once dispatch` and one
// `once work`, the latter two reaching Redis at brokerURL.
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

// afterLoad is what the outage and the restart measure once the producers
// have finished: the backlog after waiting up to timeout for it to drain,
// the stores created, and how the processes are.
type afterLoad struct {
	Executions int
	Backlog    backlog
	Drained    bool
	// Drain is from the end of the fault to the backlog drained (or to the
	// end of the wait).
	Drain     time.Duration
	Processes []processState
}

func waitAfterLoad(ctx context.Context, d *deployment, faultEnded time.Time, timeout time.Duration, progress io.Writer) (afterLoad, error) {
	var res afterLoad
	var err error
	res.Backlog, res.Drained, err = waitDrained(ctx, d.super, time.Now().Add(timeout), func(b backlog) {
		fmt.Fprintf(progress, "[%s] draining: %d events, %d delivered, %d waiting, %d dead letters\n",
			d.label, b.Events, b.Delivered, b.Waiting, b.DeadLetters)
	})
	res.Drain = time.Since(faultEnded)
	if err != nil {
		return res, err
	}
	if res.Executions, err = d.count(ctx, `SELECT count(*) FROM stores`); err != nil {
		return res, err
	}
	res.Processes = states(d.procs)
	fmt.Fprintf(progress, "[%s] %d events: %d delivered, %d dead letters, %d waiting, %d lost; max attempts %d; drained %t, %s after the fault; processes %v\n",
		d.label, res.Backlog.Events, res.Backlog.Delivered, res.Backlog.DeadLetters, res.Backlog.Waiting,
		res.Backlog.Lost(), res.Backlog.MaxAttempts, res.Drained, res.Drain.Round(time.Millisecond), res.Processes)
	return res, nil
}
