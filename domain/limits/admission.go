package limits

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
)

// WaitingPerSlot bounds the requests of one workspace waiting for a slot:
// at most this many times its cap. A waiter is then at most that many
// turns from a slot, which the work ahead of it (milliseconds each) gives
// back well within the wait; a deeper queue would only hold goroutines
// and sockets until their wait ran out.
const WaitingPerSlot = 4

// Why Admission.Enter gave no slot (besides the caller's context ending).
var (
	// ErrQueueFull: the workspace has its cap in flight and as many
	// waiting as may wait (or the admission does not wait).
	ErrQueueFull = errors.New("the workspace's slots are taken and its queue is full")
	// ErrWaitTimedOut: no slot came free within the admission's wait.
	ErrWaitTimedOut = errors.New("no slot came free within the wait")
)

// AdmissionConfig is the shape of a Admission.
type AdmissionConfig struct {
	// Max is each workspace's cap on units of work in flight (< 1: none).
	Max int
	// Wait is the longest a unit of work waits for a slot (<= 0: it is
	// refused at once).
	Wait time.Duration
	// MaxWaiting is how many units of one workspace may wait at once
	// (0: WaitingPerSlot × Max).
	MaxWaiting int
}

// Admission counts the units of work each workspace has in flight in this
// process and holds each workspace to its cap. One over the cap waits, in
// the order they came (first come, first served within the workspace),
// for a slot given back, at most Wait and only while its context lasts;
// when the queue is full, or the wait ends without a slot, it is refused.
// A workspace only ever waits behind its own work, never another's.
//
// The queue is the admission's own rather than a semaphore's: a waiter is
// queued under the same lock that counts it, so the order, the counts
// and a slot handed from one unit to the next never disagree.
type Admission struct {
	max, maxWaiting int
	wait            time.Duration

	mu sync.Mutex
	// workspaces holds only workspaces with work in flight or waiting, so
	// it is as large as the work this process does right now, not as the
	// workspaces ever seen.
	workspaces map[uuid.UUID]*slots
}

// slots is one workspace's share of the admission.
type slots struct {
	inFlight int
	// waiting holds, first come first, a channel per waiter, closed when
	// a slot is handed to it.
	waiting list.List
}

// NewAdmission returns the admission of cfg.
func NewAdmission(cfg AdmissionConfig) *Admission {
	if cfg.MaxWaiting <= 0 {
		cfg.MaxWaiting = WaitingPerSlot * max(cfg.Max, 0)
	}
	return &Admission{max: cfg.Max, maxWaiting: cfg.MaxWaiting, wait: cfg.Wait, workspaces: map[uuid.UUID]*slots{}}
}

// Max is the cap (< 1: none).
func (g *Admission) Max() int { return g.max }

// Enter takes one of workspace's slots: at once when one is free and
// nobody of the workspace waits before it, else after waiting its turn
// (waited true). It fails with ErrQueueFull, ErrWaitTimedOut, or the
// cause of ctx's end, holding nothing. Each nil error must be matched by
// one Leave.
func (g *Admission) Enter(ctx context.Context, workspace uuid.UUID) (waited bool, err error) {
	if g.max < 1 {
		return false, nil
	}
	g.mu.Lock()
	s := g.workspaces[workspace]
	if s == nil {
		s = &slots{}
		g.workspaces[workspace] = s
	}
	if s.inFlight < g.max && s.waiting.Len() == 0 {
		s.inFlight++
		g.mu.Unlock()
		return false, nil
	}
	if g.wait <= 0 || s.waiting.Len() >= g.maxWaiting {
		g.mu.Unlock()
		return false, ErrQueueFull
	}
	handed := make(chan struct{})
	turn := s.waiting.PushBack(handed)
	g.mu.Unlock()

	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	select {
	case <-handed:
		return true, nil
	case <-timer.C:
		err = ErrWaitTimedOut
	case <-ctx.Done():
		err = context.Cause(ctx)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-handed:
		// The slot came as the wait ended: pass it on, as Leave would.
		g.giveBack(workspace, s)
	default:
		s.waiting.Remove(turn)
		g.forgetIdle(workspace, s)
	}
	return false, err
}

// Leave gives back a slot Enter took: to the workspace's first waiter,
// if any.
func (g *Admission) Leave(workspace uuid.UUID) {
	if g.max < 1 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.workspaces[workspace]; s != nil {
		g.giveBack(workspace, s)
	}
}

// giveBack hands one slot of s to its first waiter, or frees it. g.mu is
// held.
func (g *Admission) giveBack(workspace uuid.UUID, s *slots) {
	if first := s.waiting.Front(); first != nil {
		s.waiting.Remove(first)
		close(first.Value.(chan struct{})) // the slot changes hands: inFlight stays
		return
	}
	s.inFlight--
	g.forgetIdle(workspace, s)
}

// forgetIdle drops s once nothing of its workspace is in flight or
// waiting. g.mu is held.
func (g *Admission) forgetIdle(workspace uuid.UUID, s *slots) {
	if s.inFlight <= 0 && s.waiting.Len() == 0 {
		delete(g.workspaces, workspace)
	}
}

// InFlight is how many units of work workspace has in flight (for tests:
// they synchronise on it).
func (g *Admission) InFlight(workspace uuid.UUID) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.workspaces[workspace]; s != nil {
		return s.inFlight
	}
	return 0
}

// Waiting is how many units of work of workspace wait for a slot (for
// tests: they synchronise on it).
func (g *Admission) Waiting(workspace uuid.UUID) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.workspaces[workspace]; s != nil {
		return s.waiting.Len()
	}
	return 0
}
