package simcore

import (
	"context"
	"sync"
	"time"

	"github.com/oncehq/once/domain"
)

// Faults are the failures a simulated system injects on demand and the
// latency it answers with. Its errors name the system and its calls
// ("provider call timed out"). It is safe for concurrent use.
type Faults struct {
	system, call string

	mu      sync.Mutex
	latency time.Duration
	next    int
	nextErr error
	after   int
}

// NewFaults returns the Faults of system (its name in errors: "provider"),
// whose calls are named call ("call", "fetch"): no latency, nothing
// injected.
func NewFaults(system, call string) *Faults {
	return &Faults{system: system, call: call}
}

// SetLatency makes every call take d (or until its context ends).
func (f *Faults) SetLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

// FailNext makes the next n calls fail before the system acts, with err
// (a CodeUnavailable outage if err is nil).
func (f *Faults) FailNext(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		err = domain.Errorf(domain.CodeUnavailable, "simulated %s outage", f.system)
	}
	f.next, f.nextErr = n, err
}

// FailAfter makes the next n calls that get past FailNext answer with a
// timeout (CodeUnavailable) after the system acted.
func (f *Faults) FailAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.after = n
}

// Wait takes the latency. A context that ends first abandons the call
// before the system acts: CodeUnavailable.
func (f *Faults) Wait(ctx context.Context) error {
	f.mu.Lock()
	d := f.latency
	f.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return f.abandoned(ctx.Err())
	case <-t.C:
		return nil
	}
}

// Abandoned is the error of a call whose context has ended, nil while it
// has not.
func (f *Faults) Abandoned(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return f.abandoned(err)
	}
	return nil
}

func (f *Faults) abandoned(err error) error {
	return domain.Wrap(domain.CodeUnavailable, err, f.system+" "+f.call+" abandoned")
}

// Before consumes one injected FailNext failure, if any: the call fails
// before the system acts.
func (f *Faults) Before() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next > 0 {
		f.next--
		return f.nextErr
	}
	return nil
}

// After consumes one injected FailAfter timeout, if any. Call it after
// the system acted: the answer is lost, the work done.
func (f *Faults) After() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.after > 0 {
		f.after--
		return domain.Errorf(domain.CodeUnavailable, "%s %s timed out", f.system, f.call)
	}
	return nil
}
