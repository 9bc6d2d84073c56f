package simhttp

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Action is what a Fault does to a call.
type Action string

const (
	// ActionFail answers 503 before the system acts: a transient outage.
	ActionFail Action = "fail"
	// ActionReject answers 422 before the system acts: a permanent refusal.
	ActionReject Action = "reject"
	// ActionFailAfter lets the system act, then answers 503: the effect
	// happened and the caller never hears of it.
	ActionFailAfter Action = "fail_after"
	// ActionDelay waits Delay before the system acts.
	ActionDelay Action = "delay"
	// ActionHold keeps the call open before the system acts until it is
	// released (POST /admin/release), whatever happens to the caller.
	ActionHold Action = "hold"
	// ActionHoldAfter lets the system act, then keeps the call open before
	// answering until it is released.
	ActionHoldAfter Action = "hold_after"
)

// Fault changes the next Times calls of Kind (any kind if empty). Faults
// are used in the order they were added; each call takes at most one: the
// first that matches its kind and has calls left.
type Fault struct {
	Kind   Kind   `json:"kind,omitempty"`
	Action Action `json:"action"`
	// Times is how many calls the fault applies to; 0 means 1.
	Times int `json:"times,omitempty"`
	// DelayMS is how long ActionDelay waits, in milliseconds.
	DelayMS int64 `json:"delay_ms,omitempty"`
}

func (f Fault) validate() error {
	switch f.Action {
	case ActionFail, ActionReject, ActionFailAfter, ActionHold, ActionHoldAfter:
	case ActionDelay:
		if f.DelayMS <= 0 {
			return errors.New("a delay needs a positive delay_ms")
		}
	default:
		return fmt.Errorf("unknown action %q", f.Action)
	}
	if f.Kind != "" && !slices.Contains(Kinds, f.Kind) {
		return fmt.Errorf("unknown kind %q", f.Kind)
	}
	if f.Times < 0 {
		return errors.New("times cannot be negative")
	}
	return nil
}

// HeldCall is a call kept open by ActionHold or ActionHoldAfter.
type HeldCall struct {
	ID    int64     `json:"id"`
	Kind  Kind      `json:"kind"`
	Token string    `json:"token,omitempty"`
	After bool      `json:"after"`
	Since time.Time `json:"since"`
}

// faults holds the faults waiting for calls and the calls held open.
type faults struct {
	mu      sync.Mutex
	pending []Fault
	held    map[int64]heldCall
	nextID  int64
	closing chan struct{}
	closed  bool
}

type heldCall struct {
	HeldCall
	release chan struct{}
}

func newFaults() *faults {
	return &faults{held: map[int64]heldCall{}, closing: make(chan struct{})}
}

func (fs *faults) add(f Fault) error {
	if err := f.validate(); err != nil {
		return err
	}
	if f.Times == 0 {
		f.Times = 1
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.pending = append(fs.pending, f)
	return nil
}

// clear drops the faults not used yet; held calls stay held.
func (fs *faults) clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.pending = nil
}

// take uses one call of the first fault that matches kind.
func (fs *faults) take(kind Kind) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, f := range fs.pending {
		if f.Kind != "" && f.Kind != kind {
			continue
		}
		if f.Times--; f.Times == 0 {
			fs.pending = slices.Delete(fs.pending, i, i+1)
		} else {
			fs.pending[i] = f
		}
		return f, true
	}
	return Fault{}, false
}

// hold keeps the caller waiting until the call is released; false if the
// server is closing instead.
func (fs *faults) hold(kind Kind, token string, after bool) bool {
	fs.mu.Lock()
	if fs.closed {
		fs.mu.Unlock()
		return false
	}
	fs.nextID++
	h := heldCall{
		HeldCall: HeldCall{ID: fs.nextID, Kind: kind, Token: token, After: after, Since: time.Now().UTC()},
		release:  make(chan struct{}),
	}
	fs.held[h.ID] = h
	fs.mu.Unlock()

	select {
	case <-h.release:
		return true
	case <-fs.closing:
		return false
	}
}

// wait sleeps d; false if the server is closing first.
func (fs *faults) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-fs.closing:
		return false
	}
}

// heldCalls lists the calls held open, oldest first.
func (fs *faults) heldCalls() []HeldCall {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]HeldCall, 0, len(fs.held))
	for _, h := range fs.held {
		out = append(out, h.HeldCall)
	}
	slices.SortFunc(out, func(a, b HeldCall) int { return int(a.ID - b.ID) })
	return out
}

// release lets every held call go on and says how many there were.
func (fs *faults) release() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := len(fs.held)
	for id, h := range fs.held {
		close(h.release)
		delete(fs.held, id)
	}
	return n
}

// close ends every hold and wait: the server is going away.
func (fs *faults) close() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.closed {
		fs.closed = true
		close(fs.closing)
	}
}
