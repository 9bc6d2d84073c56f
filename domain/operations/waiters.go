package operations

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// MaxWait is the longest a read of an operation waits for its end. It
// stays under the API server's 30 s write timeout, which counts from the
// request's arrival: a longer wait would be cut off before its answer.
const MaxWait = 25 * time.Second

// waitRetryAfter is what a waiter over a cap is told to wait before it
// asks again: by then most waits of the moment have ended.
const waitRetryAfter = time.Second

// Waiters are the reads of this process that wait for an operation to end
// (GET /v1/operations/{id}?wait=). Each holds a wake-up channel, never a
// database connection: ports.OperationEnds says which operations may have
// ended, and the waiters of those re-read them. Their number is capped per
// process and per workspace, since each holds a request, a goroutine and
// an open client connection; one over a cap is refused with
// CodeTooManyWaiters.
type Waiters struct {
	ends          ports.OperationEnds
	max, perSpace int
	listening     sync.Once
	mu            sync.Mutex
	byOperation   map[uuid.UUID]map[*waiter]struct{}
	byWorkspace   map[uuid.UUID]int
	total         int
	// parked are the waiters between a read and their wake-up.
	parked int
	// wokenUp counts the wake-ups delivered (WokenUp).
	wokenUp int
	stopped bool
}

// waiter is one read waiting; wake holds one wake-up, so a wake-up never
// blocks the adapter that delivers it.
type waiter struct {
	workspace, operation uuid.UUID
	wake                 chan struct{}
}

// NewWaiters returns Waiters woken through ends, at most max in this
// process and perWorkspace per workspace (0: no cap).
func NewWaiters(ends ports.OperationEnds, max, perWorkspace int) *Waiters {
	return &Waiters{
		ends: ends, max: max, perSpace: perWorkspace,
		byOperation: map[uuid.UUID]map[*waiter]struct{}{}, byWorkspace: map[uuid.UUID]int{},
	}
}

var _ ports.OperationEndListener = (*Waiters)(nil)

// Waiting is the number of reads parked now: registered, read once, and
// waiting for a wake-up with nothing held.
func (w *Waiters) Waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.parked
}

// WokenUp is how many waiters an end (or a missed notification, or Stop)
// has woken so far: a read whose wait ran out is not among them, which is
// how a test tells a read woken by an end from one that waited its time
// out, whatever the machine's load.
func (w *Waiters) WokenUp() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wokenUp
}

// park counts the waiters that wait for a wake-up (Waiting).
func (w *Waiters) park(delta int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parked += delta
}

// Heard implements ports.OperationEndListener: it wakes the waiters of ids.
func (w *Waiters) Heard(ids []uuid.UUID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		for one := range w.byOperation[id] {
			w.wake(one)
		}
	}
}

// Missed implements ports.OperationEndListener: it wakes every waiter.
func (w *Waiters) Missed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakeAll()
}

// Stop wakes every waiter and makes every later wait return at once, so
// that a server shutting down is not held by reads that may wait for
// MaxWait: each answers with the state it reads. A nil Waiters has none.
func (w *Waiters) Stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.wakeAll()
}

func (w *Waiters) isStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

func (w *Waiters) wakeAll() {
	for _, set := range w.byOperation {
		for one := range set {
			w.wake(one)
		}
	}
}

// add registers a waiter for operation, before the caller reads it: an end
// committed between the read and the wait still wakes it. It starts
// hearing ends at its first call. A nil waiter, with no error, means the
// waiters are stopped: the caller answers with what it reads.
func (w *Waiters) add(workspace, operation uuid.UUID) (*waiter, error) {
	w.listening.Do(func() { w.ends.Listen(w) })
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return nil, nil
	}
	if w.max > 0 && w.total >= w.max {
		return nil, tooManyWaiters("this server has %d reads waiting, its cap", w.max)
	}
	if w.perSpace > 0 && w.byWorkspace[workspace] >= w.perSpace {
		return nil, tooManyWaiters("the workspace has %d reads waiting on this server, its cap", w.perSpace)
	}
	one := &waiter{workspace: workspace, operation: operation, wake: make(chan struct{}, 1)}
	set := w.byOperation[operation]
	if set == nil {
		set = map[*waiter]struct{}{}
		w.byOperation[operation] = set
	}
	set[one] = struct{}{}
	w.byWorkspace[workspace]++
	w.total++
	return one, nil
}

// remove forgets one.
func (w *Waiters) remove(one *waiter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	set := w.byOperation[one.operation]
	delete(set, one)
	if len(set) == 0 {
		delete(w.byOperation, one.operation)
	}
	if w.byWorkspace[one.workspace]--; w.byWorkspace[one.workspace] == 0 {
		delete(w.byWorkspace, one.workspace)
	}
	w.total--
}

// wake wakes one, under w.mu.
func (w *Waiters) wake(one *waiter) {
	select {
	case one.wake <- struct{}{}:
		w.wokenUp++
	default: // a wake-up is pending already
	}
}

func tooManyWaiters(format string, limit int) error {
	err := domain.Errorf(domain.CodeTooManyWaiters, format+"; ask again without wait, or after Retry-After", limit)
	err.RetryAfter = waitRetryAfter
	return err
}
