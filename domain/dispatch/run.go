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
	// What the round that saw the stop settled, for stopped.
	var last Result
	var lastErr error
	for ctx.Err() == nil {
		after, err := d.round(ctx, f)
		res, batchErr := f.take()
		err = errors.Join(err, batchErr)
		if ctx.Err() != nil {
			last, lastErr = res, batchErr
			break
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
	d.stopped(f, last, lastErr)
}

// stopped waits for the batches still in flight when Run was told to
// stop, and logs how the last round ended: events published and marked,
// and events handed back to pending (uncounted, due at once, for any
// Dispatcher) rather than left under this one's lease.
func (d *Dispatcher) stopped(f *flight, last Result, lastErr error) {
	f.wait()
	res, err := f.take()
	res.add(last)
	err = errors.Join(lastErr, err)
	attrs := []any{"published", res.Published, "handed_back", res.Postponed}
	if err = besidesStopping(err); err != nil {
		// A hand-back that failed leaves its events to the lease: another
		// Dispatcher takes them over when it expires.
		d.log.Warn("dispatcher stopped; some events stay leased until their lease expires", append(attrs, "error", domain.SanitizeError(err))...)
		return
	}
	d.log.Info("dispatcher stopped: no event left under its lease", attrs...)
}

// besidesStopping drops from err the cancellations that stopping causes (a
// claim or a publish cut short), keeping the failures that matter here: a
// hand-back or a mark that did not happen.
func besidesStopping(err error) error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var kept []error
		for _, e := range joined.Unwrap() {
			if e = besidesStopping(e); e != nil {
				kept = append(kept, e)
			}
		}
		return errors.Join(kept...)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}
