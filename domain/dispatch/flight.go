package dispatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// flight holds the batches a Dispatcher has claimed and not yet settled.
// Claim, publish and mark of different batches overlap: while one batch is
// with the broker, the next is being claimed and the one before marked,
// instead of each waiting on the round trips of the others. At most
// Config.Concurrency batches are in flight (a slot each, taken before the
// claim and given back after the mark), which bounds the connections, the
// memory and the events held under lease at once. Fairness is the round's:
// one batch per due workspace per round, slots taken in round order.
type flight struct {
	slots   chan struct{}
	batches sync.WaitGroup

	mu    sync.Mutex
	res   Result
	errs  []error
	turns map[uuid.UUID]*turn // each workspace's last batch launched
	// panicked is the first panic of a batch (an event that crashes the
	// publisher, say), raised again on the caller's goroutine by take, as
	// if the batch had run there.
	panicked any
}

func (d *Dispatcher) newFlight() *flight {
	return &flight{slots: make(chan struct{}, d.cfg.Concurrency), turns: map[uuid.UUID]*turn{}}
}

// acquire takes a slot, waiting for one to free; false when ctx ended
// first.
func (f *flight) acquire(ctx context.Context) bool {
	select {
	case f.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (f *flight) release() { <-f.slots }

// wait returns once every batch launched has settled.
func (f *flight) wait() { f.batches.Wait() }

func (f *flight) add(res Result, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.res.add(res)
	if err != nil {
		f.errs = append(f.errs, err)
	}
}

// recover keeps a batch's panic for take; deferred by each batch.
func (f *flight) recover() {
	if p := recover(); p != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.panicked == nil {
			f.panicked = p
		}
	}
}

// take returns and clears what the settled batches did, or panics with
// the panic of one.
func (f *flight) take() (Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.panicked; p != nil {
		panic(p)
	}
	res, err := f.res, errors.Join(f.errs...)
	f.res, f.errs = Result{}, nil
	return res, err
}

// order returns the turn of a batch of ws about to be claimed, after the
// batch of ws launched before it (if that one is still in flight).
func (f *flight) order(ws uuid.UUID) *turn {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &turn{
		f: f, ws: ws, prev: f.turns[ws],
		publishDone: make(chan struct{}), settleDone: make(chan struct{}),
	}
	f.turns[ws] = t
	return t
}

// turn keeps one workspace's batches in claim order through the pipeline:
// a batch publishes after the batch claimed before it published, and
// settles (marks) after that one settled. Without it, two batches of one
// workspace in flight could reach the broker in either order.
type turn struct {
	f           *flight
	ws          uuid.UUID
	prev        *turn
	publishOnce sync.Once
	publishDone chan struct{}
	// handedBack says the batch went back uncounted without the broker
	// taking it; set before publishDone closes.
	handedBack bool
	settleOnce sync.Once
	settleDone chan struct{}
}

// waitPublish waits for the previous batch's publish, at most until
// minWindow before deadline (by clock), and reports whether this batch may
// publish now: false when less than minWindow is left, the previous batch
// was handed back, or ctx ended (the Dispatcher is stopping). waited says
// that the previous batch was still publishing when the wait began: this
// batch's window is then shorter than a batch's that did not wait.
func (t *turn) waitPublish(ctx context.Context, clock ports.Clock, deadline time.Time, minWindow time.Duration) (ok, waited bool) {
	last := deadline.Add(-minWindow)
	if t.prev != nil {
		select {
		case <-t.prev.publishDone:
		default:
			waited = true
		}
		timer := time.NewTimer(last.Sub(clock.Now()))
		defer timer.Stop()
		select {
		case <-t.prev.publishDone:
			if t.prev.handedBack {
				return false, waited
			}
		case <-timer.C:
			return false, waited
		case <-ctx.Done():
			return false, waited
		}
	}
	return !clock.Now().After(last), waited
}

// published ends the batch's turn to publish; handedBack as in turn.
func (t *turn) published(handedBack bool) {
	t.publishOnce.Do(func() {
		t.handedBack = handedBack
		close(t.publishDone)
	})
}

// waitSettle waits for the previous batch's mark or release.
func (t *turn) waitSettle(ctx context.Context) {
	if t.prev != nil {
		select {
		case <-t.prev.settleDone:
		case <-ctx.Done():
		}
	}
}

// done ends the turn, whichever way the batch went, and forgets it if no
// later batch of the workspace follows. A batch that did not take its turn
// (its claim failed or found nothing, or it panicked) ends it only once
// the batch before it has settled, passing on whether that one was handed
// back, so the next batch still follows the last one that published.
func (t *turn) done() {
	handedBack := false
	if t.prev != nil {
		<-t.prev.settleDone
		handedBack = t.prev.handedBack
	}
	t.published(handedBack)
	t.settleOnce.Do(func() { close(t.settleDone) })
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.prev = nil // let the chain be collected
	if t.f.turns[t.ws] == t {
		delete(t.f.turns, t.ws)
	}
}

// uowClaims runs ports.OutboxClaims through a UnitOfWork, for stores
// without a faster path (memory).
type uowClaims struct{ uow ports.UnitOfWork }

func (c uowClaims) ClaimDue(ctx context.Context, ws uuid.UUID, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (ports.Claim, error) {
	return ports.Query(ctx, c.uow, ws, func(ctx context.Context, tx ports.Tx) (ports.Claim, error) {
		return tx.OutboxDispatch().ClaimDue(ctx, owner, now, lease, limit, maxAttempts)
	})
}

func (c uowClaims) MarkDispatched(ctx context.Context, ws uuid.UUID, owner string, ids []uuid.UUID, at time.Time) (int, error) {
	return ports.Query(ctx, c.uow, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.OutboxDispatch().MarkDispatched(ctx, owner, ids, at)
	})
}
