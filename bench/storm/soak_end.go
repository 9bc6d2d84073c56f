package storm

import (
	"context"
	"fmt"
	"io"
	"time"
)

// soakSettleTimeout bounds the wait, after the load, for the last jobs.
const soakSettleTimeout = 5 * time.Minute

// soakEnd is the state once the load has stopped and the pipeline has had
// time to finish what it was given: every accepted create must have its
// event delivered and its job ended, succeeded.
type soakEnd struct {
	Accepted                      int64 // creates answered 2xx, calibration included
	Operations                    int64
	Succeeded, Failed, Unfinished int64
	Undelivered, DeadLettered     int64 // events still pending or leased / parked
	Waited                        time.Duration
	Settled                       bool
}

// settle waits (bounded) until no event is left to deliver and no
// operation is pending or running, then counts them.
func (s *soak) settle(ctx context.Context) (soakEnd, error) {
	end := soakEnd{Accepted: s.load.acceptedTotal.Load()}
	start := time.Now()
	fmt.Fprintf(s.r.progress, "== load stopped after %d accepted creates; waiting for the last jobs\n", end.Accepted)
	for {
		err := s.d.super.QueryRowContext(ctx, soakEndCounts).Scan(&end.Operations, &end.Succeeded, &end.Failed,
			&end.Unfinished, &end.Undelivered, &end.DeadLettered)
		if err != nil {
			return end, err
		}
		end.Waited = time.Since(start)
		if end.Unfinished == 0 && end.Undelivered == 0 {
			end.Settled = true
			return end, nil
		}
		if end.Waited > soakSettleTimeout {
			return end, nil
		}
		select {
		case <-ctx.Done():
			return end, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// soakEndCounts: the operations by outcome, and the events the outbox
// still holds (the retention removes only dispatched ones).
const soakEndCounts = `
SELECT count(*),
       count(*) FILTER (WHERE status = 'succeeded'),
       count(*) FILTER (WHERE status = 'failed'),
       count(*) FILTER (WHERE status IN ('pending', 'running')),
       (SELECT count(*) FROM outbox_events WHERE status IN ('pending', 'dispatching')),
       (SELECT count(*) FROM outbox_events WHERE status = 'dead_letter')
  FROM operations`

// writeSoakEnd prints the last check: every create delivered, its job
// ended, succeeded.
func writeSoakEnd(w io.Writer, e soakEnd) {
	if e.Accepted == 0 {
		return
	}
	// A create whose answer the bench stopped reading (the calibration's
	// end cancels requests in flight) may still have committed: there can
	// be more operations than accepted creates, never fewer.
	ok := e.Settled && e.Operations >= e.Accepted && e.Succeeded == e.Operations && e.DeadLettered == 0
	fmt.Fprintf(w, "- after the load (%s to settle): %d creates accepted, %d operations: %d succeeded, %d failed, %d unfinished; "+
		"%d events undelivered, %d dead-lettered (target: every create delivered and its job succeeded): %s\n",
		e.Waited.Round(time.Second), e.Accepted, e.Operations, e.Succeeded, e.Failed, e.Unfinished, e.Undelivered, e.DeadLettered, passOrFail(ok))
}
