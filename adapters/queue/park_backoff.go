package queue

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// parkBackoff is how long a worker waits before it hands back to the
// broker a message it could not park: the database is down, and the
// broker hands the message out again at once (RabbitMQ) or 100 ms later
// (Redis Streams), so without a wait each message spins, running its job
// and trying to park it over and over. The wait doubles with each park
// that fails in a row, across the worker's messages, from initial up to
// max, ±half; a park that commits starts it again from initial. The
// message holds no slot while it waits.
type parkBackoff struct {
	initial, max time.Duration
	// sleep waits d or until ctx ends (nil: a timer).
	sleep func(ctx context.Context, d time.Duration)

	mu     sync.Mutex
	failed int // parks that failed in a row
}

// failedPark waits before a message that could not be parked goes back.
func (b *parkBackoff) failedPark(ctx context.Context) {
	b.mu.Lock()
	wait := b.initial
	for i := 0; i < b.failed && wait < b.max; i++ {
		wait *= 2
	}
	wait = min(wait, b.max)
	b.failed++
	b.mu.Unlock()
	wait = wait/2 + rand.N(wait)
	if b.sleep != nil {
		b.sleep(ctx, wait)
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// parked: the database takes parks again.
func (b *parkBackoff) parked() {
	b.mu.Lock()
	b.failed = 0
	b.mu.Unlock()
}

// heldSlot carries a job's slot from takeSlot out to later when its run
// failed: the slot and the destinations's permit are let go once later knows
// whether the job is parked, so a job that could not be parked ends its
// call Abandoned, which gives the destination's token back (the message
// comes again and runs again: this run's call must not count twice).
type heldSlot struct {
	release func(CallResult)
	result  CallResult
}

// hold keeps release for later to call, if later holds slots.
func hold(run *jobRun, release func(CallResult), result CallResult) bool {
	if run.held == nil {
		return false
	}
	run.held.release, run.held.result = release, result
	return true
}

// end lets the slot go: with the call's own result, or Abandoned.
func (h *heldSlot) end(abandoned bool) {
	if h.release == nil {
		return
	}
	r := h.result
	if abandoned {
		r = CallResult{Abandoned: true}
	}
	h.release(r)
	h.release = nil
}
