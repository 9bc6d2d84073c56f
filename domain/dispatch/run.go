package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/oncehq/once/domain"
)

// Error backoff of the Run loop: short, growing, bounded.
const (
	errorBackoffBase = 100 * time.Millisecond
	errorBackoffMax  = 10 * time.Second
)

// Run dispatches until ctx is done. After a round that claimed a full
// batch for some workspace (or took over an expired lease) it goes again at
// once, while that round's batches are still being published and marked
// (up to Config.Concurrency batches in flight); otherwise it waits for a
// wake-up from the DispatchSignal or the jittered poll interval. While the
// broker is unreachable it checks the breaker every poll interval (at most
// BreakerOpen), ignoring wake-ups: new events wait with the others. A
// failed round or batch is logged and retried after a short, growing
// backoff; Run never returns early on an error. It returns once every
// batch in flight is settled (events a stopped publish could not deliver
// are handed back).
func (d *Dispatcher) Run(ctx context.Context) {
	var wake <-chan struct{}
	if d.signal != nil {
		wake = d.signal.Wake()
	}
	f := d.newFlight()
	defer f.wait()
	failures := 0
	for ctx.Err() == nil {
		after, err := d.round(ctx, f)
		_, batchErr := f.take()
		err = errors.Join(err, batchErr)
		if ctx.Err() != nil {
			return
		}
		if after == paused {
			sleep(ctx, jitter(min(d.cfg.PollInterval, d.cfg.BreakerOpen), 0.2))
			continue
		}
		if err != nil {
			failures++
			d.log.Error("dispatch round failed", "consecutive_failures", failures, "error", domain.SanitizeError(err))
			// Wake-ups do not cut the wait short: the failure is probably
			// the database or broker, not a lack of work.
			sleep(ctx, jitter(backoff(failures, errorBackoffBase, errorBackoffMax)+errorBackoffBase, 0.2))
			continue
		}
		failures = 0
		if after == more {
			continue
		}
		timer := time.NewTimer(jitter(d.cfg.PollInterval, 0.2))
		select {
		case <-ctx.Done():
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

func sleep(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}
