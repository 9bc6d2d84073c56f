package idempotency

import (
	"sync"

	"github.com/oncehq/once/domain/model"
)

// inFlight is this process's registry of the scopes it is running. The first
// request of a scope (the leader) runs the transaction; an identical request
// arriving meanwhile (a twin) does no database work: it waits only until the
// leader's claim has decided, then gets the completed record the leader read,
// or 409 IDEMPOTENCY_REQUEST_IN_PROGRESS when the leader is executing.
//
// Cross-process correctness stays with the database: this registry only
// spares the pool the twins that would have been refused there anyway.
type inFlight struct {
	mu     sync.Mutex
	scopes map[model.IdempotencyScope]*flight
}

// flight is one leader's run of a scope. decided is closed once record,
// executing or err is set, and never written again.
type flight struct {
	decided   chan struct{}
	once      sync.Once
	record    *model.IdempotencyRecord // a completed record the leader read
	executing bool                     // the leader claimed the scope and runs the work
	err       error                    // the leader failed before deciding
	twins     int                      // requests that joined the leader (under inFlight.mu)
}

func newInFlight() *inFlight {
	return &inFlight{scopes: map[model.IdempotencyScope]*flight{}}
}

// join returns the flight of scope and whether the caller leads it. A leader
// must call release when its run ends, on every path.
func (r *inFlight) join(scope model.IdempotencyScope) (f *flight, leader bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.scopes[scope]; ok {
		f.twins++
		return f, false
	}
	f = &flight{decided: make(chan struct{})}
	r.scopes[scope] = f
	return f, true
}

// release ends the leader's run: twins still waiting learn errLeaderGone
// unless the leader decided, and the next request of scope leads anew.
func (r *inFlight) release(scope model.IdempotencyScope, f *flight, errLeaderGone error) {
	f.decide(func() { f.err = errLeaderGone })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.scopes[scope] == f {
		delete(r.scopes, scope)
	}
}

// decide publishes the leader's decision once; later calls do nothing.
func (f *flight) decide(set func()) {
	f.once.Do(func() {
		set()
		close(f.decided)
	})
}
