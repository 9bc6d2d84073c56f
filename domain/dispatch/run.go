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

// Run dispatches until ctx is done. A round launches its claims and
// returns; the loop then waits for a wake-up from the DispatchSignal, a
// claim of any round that found more due at once (a full batch, or an
// expired lease), or the jittered poll interval, whichever comes first, and
// starts the next round while the last one's batches are still being
// claimed, published and marked (up to Config.Concurrency batches in
// flight). Under a steady flow of commits the next discovery thus overlaps
// the claims instead of following them. While the
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
		timer := time.NewTimer(jitter(d.cfg.PollInterval, 0.2))
		select {
		case <-ctx.Done():
		case <-wake:
		case <-d.again:
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
