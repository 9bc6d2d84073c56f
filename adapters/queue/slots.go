package queue

import (
	"container/list"
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// slots hands a worker's Concurrency slots to the messages waiting for
// one. A message holds no slot while it waits, and the order it gets one
// in is the policy of the work side:
//
//   - Fair between workspaces: each slot freed goes to the workspace with
//     a message waiting that got one least recently, among those holding
//     less than their share first (holdings), so one workspace's backlog
//     of thousands, or its calls of 14 s, takes at most its share of the
//     slots while others have messages, and all of them only alone (and
//     then, if its calls are long, all but a few spare ones for a
//     workspace that comes: holdings).
//   - Ordered per key: of the messages with one ordering key, only the
//     first to arrive may start, and only once none of the key runs.
//   - Paced per destination: a message starts only when its destination's
//     state (Destinations) grants the call. A wait longer than hold is not spent in a
//     slot nor in memory: the message is told to wait durably (wait.until),
//     with every message of its ordering key waiting behind it, so the key
//     keeps its order when they come back. Messages for a paced
//     destination come back at its pace, each at a turn of its own
//     (booked); messages for a destination that is down come back one per
//     cooldown, to probe it, and the rest when a call to it is answered
//     (asleep), or after outageWait at the latest.
//
// The messages waiting are the ones the broker handed out (the
// subscriber's prefetch), so the lookahead is as deep as that.
type slots struct {
	size int
	hold time.Duration
	gate Destinations
	now  func() time.Time
	// outageWait is how long a message parked for a destination that is
	// down waits if nothing wakes it (default 10m).
	outageWait time.Duration
	// woken hears that a destination some messages were parked long for
	// answers again: the workspaces whose messages were parked for its
	// outage, and how many each. It runs in a goroutine of its own.
	woken func(destination string, workspaces map[uuid.UUID]int)

	mu      sync.Mutex
	closed  bool // no ticket gets a slot any more (the worker drains)
	running int
	peak    int
	waiting int
	seq     uint64
	queues  map[uuid.UUID]*list.List // each workspace's waiting tickets, in arrival order
	turns   []uuid.UUID              // workspaces with tickets waiting
	served  map[uuid.UUID]uint64     // when each workspace last got a slot (grants counts them)
	grants  uint64
	holding holdings                           // the slots each workspace holds, for its fair share
	keys    map[string]*list.List              // each ordering key's waiting tickets and reservations, in arrival order
	keyWait map[string]keyLine                 // keys whose line was parked: later arrivals wait behind it
	busy    map[string]bool                    // ordering keys with a job running
	blocked map[string]Refusal                 // destinations refused until then (the destinations's answer, cached)
	booked  map[string]time.Time               // paced destinations: the next free turn of a message parked for one
	probeAt map[string]map[uuid.UUID]time.Time // destinations down: when each workspace's message parked to probe them comes back
	asleep  map[string]*sleepers               // destinations down: the messages parked long for them
	wokenAt map[string]time.Time               // destination and workspace: when a job that had waited for it woke the others
	wake    *time.Timer
	wakeAt  time.Time
	sweptAt time.Time // see sweep
}

// ticket is one message waiting for a slot.
type ticket struct {
	workspace   uuid.UUID
	destination string
	key         string
	seq         uint64
	startedAt   time.Time // when it got its slot
	inQueue     *list.Element
	inKey       *list.Element
	answer      chan grant // buffered: the pump never blocks on it
	// parked is set on a reservation whose key's line was parked before
	// its message asked for a slot: it is answered with it at once.
	parked *waitFor
}

// grant is a ticket's answer: a slot (done reports its call to the destinations,
// nil without a destination), a durable wait, or stopped: the worker
// drains and the message is handed back unstarted.
type grant struct {
	done    func(CallResult)
	wait    *waitFor
	stopped bool
}

// errStopping is what acquire answers once the worker drains.
var errStopping = errors.New("not started: the worker is stopping")

// close gives no slot any more: every ticket waiting, and every one to
// come, is answered stopped, so a draining worker waits for the jobs
// running and not for its buffer.
func (s *slots) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, k := range s.keys {
		for e := k.Front(); e != nil; e = e.Next() {
			if t := e.Value.(*ticket); t.inQueue == nil {
				t.parked = nil // answered stopped when it asks
			}
		}
	}
	for len(s.turns) > 0 {
		q := s.queues[s.turns[0]]
		t := q.Front().Value.(*ticket)
		s.dequeue(t)
		t.answer <- grant{stopped: true}
	}
}

func newSlots(size int, hold time.Duration, gate Destinations, now func() time.Time) *slots {
	if now == nil {
		now = time.Now
	}
	return &slots{
		size: size, hold: hold, gate: gate, now: now, outageWait: DefaultOutageWait, holding: newHoldings(size),
		queues: map[uuid.UUID]*list.List{}, keys: map[string]*list.List{}, served: map[uuid.UUID]uint64{},
		busy: map[string]bool{}, blocked: map[string]Refusal{}, keyWait: map[string]keyLine{},
		booked: map[string]time.Time{}, probeAt: map[string]map[uuid.UUID]time.Time{}, asleep: map[string]*sleepers{},
		wokenAt: map[string]time.Time{},
	}
}

// reserve holds a place in key's line for a message the broker just
// handed out, before its goroutine asks for a slot: the router runs each
// message in a goroutine of its own, and those may ask out of order. The
// reservation is acquire's to fill in, or cancel's to drop.
func (s *slots) reserve(key string) *ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	t := &ticket{key: key, seq: s.seq, answer: make(chan grant, 1)}
	s.joinKey(t)
	return t
}

// cancel drops a reservation whose message will not ask for a slot.
func (s *slots) cancel(t *ticket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.inQueue == nil && t.inKey != nil {
		s.leaveKey(t)
		s.pump()
	}
}

// acquire waits for a slot for a message of workspace, bound for
// destination, with ordering key ("" for none) and its reservation (nil:
// none, see reserve). It returns the slot's release, to call once the
// job's outcome is recorded with what its call taught, or a durable wait
// instead of a slot, or ctx's error if the worker stops first.
func (s *slots) acquire(ctx context.Context, workspace uuid.UUID, destination, key string, reserved *ticket) (release func(CallResult), wait *waitFor, err error) {
	_, release, wait, err = s.acquireCall(ctx, workspace, destination, key, reserved)
	return release, wait, err
}

// acquireCall is acquire with, beside the slot's release, teach: it tells
// the destinations how the job's call went at once, before the slot is released
// (which does it too, if teach was not called). A 429 must reach the
// destinations as soon as it is answered: the slot of a throttled job is held
// until the job is parked, a transaction, and every call they let
// through meanwhile, at a pace they do not yet know to be too fast, is
// answered 429 too (a worker's 100 jobs of one platform's bucket met 44
// 429s in the first second).
func (s *slots) acquireCall(ctx context.Context, workspace uuid.UUID, destination, key string, reserved *ticket) (teach, release func(CallResult), wait *waitFor, err error) {
	t, answered, err := s.line(workspace, destination, key, reserved)
	if err != nil || answered != nil {
		return nil, nil, answered, err
	}
	select {
	case g := <-t.answer:
		if g.stopped {
			return nil, nil, nil, errStopping
		}
		teach, release = s.releaser(t, g)
		return teach, release, g.wait, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.inQueue != nil {
		s.dequeue(t)
		s.pump()
		return nil, nil, nil, context.Cause(ctx)
	}
	// Answered while ctx ended: give the slot (if any) back.
	if g := <-t.answer; g.wait == nil && !g.stopped {
		s.finish(t, g.done, CallResult{Abandoned: true})
	}
	return nil, nil, nil, context.Cause(ctx)
}

// line puts a message in its workspace's line (its reservation's place in
// its key's line kept), or answers it at once: the worker stops, or its
// key's line waits durably.
func (s *slots) line(workspace uuid.UUID, destination, key string, t *ticket) (*ticket, *waitFor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil || t.key != key {
		if t != nil && t.inKey != nil {
			s.leaveKey(t)
		}
		s.seq++
		t = &ticket{key: key, seq: s.seq, answer: make(chan grant, 1)}
		if key != "" {
			s.joinKey(t)
		}
	}
	if s.closed {
		if t.inKey != nil {
			s.leaveKey(t)
		}
		return nil, nil, errStopping
	}
	if t.parked != nil {
		return nil, t.parked, nil
	}
	if kl, ok := s.keyWait[key]; ok {
		if s.now().Before(kl.until) {
			kl.until = kl.until.Add(time.Microsecond)
			s.keyWait[key] = kl
			s.leaveKey(t)
			return nil, kl.behind(workspace), nil
		}
		delete(s.keyWait, key)
	}
	t.workspace, t.destination = workspace, destination
	s.enqueue(t)
	s.pump()
	return t, nil, nil
}

// releaser is what acquire hands out for g (nil for a wait): teach
// tells the destinations the call's result, once, and release frees the slot,
// teaching first if teach was not called.
func (s *slots) releaser(t *ticket, g grant) (teach, release func(CallResult)) {
	if g.wait != nil {
		return nil, nil
	}
	var taught, released sync.Once
	teach = func(r CallResult) {
		if g.done != nil {
			taught.Do(func() { g.done(r) })
		}
	}
	release = func(r CallResult) {
		released.Do(func() {
			// Taught before the lock: the destinations may write the fleet's
			// record (the call's lease given back), and every other slot
			// waits while the lock is held.
			teach(r)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.finish(t, nil, r)
		})
	}
	return teach, release
}

// finish frees t's slot (under mu) and hands it on.
func (s *slots) finish(t *ticket, done func(CallResult), r CallResult) {
	if done != nil {
		done(r)
	}
	s.running--
	s.holding.give(t.workspace, s.now().Sub(t.startedAt))
	if t.key != "" {
		delete(s.busy, t.key)
	}
	if t.destination != "" {
		delete(s.blocked, t.destination) // a call ended: its destination may take another
		if !r.Failed && !r.Abandoned {
			s.answered(t.destination, t.startedAt)
		}
	}
	s.pump()
}

func (s *slots) enqueue(t *ticket) {
	q := s.queues[t.workspace]
	if q == nil {
		q = list.New()
		s.queues[t.workspace] = q
		s.turns = append(s.turns, t.workspace)
	}
	t.inQueue = q.PushBack(t)
	s.waiting++
}

// joinKey puts t at the end of its key's line (under mu).
func (s *slots) joinKey(t *ticket) {
	k := s.keys[t.key]
	if k == nil {
		k = list.New()
		s.keys[t.key] = k
	}
	t.inKey = k.PushBack(t)
}

// leaveKey takes t out of its key's line (under mu).
func (s *slots) leaveKey(t *ticket) {
	k := s.keys[t.key]
	k.Remove(t.inKey)
	t.inKey = nil
	if k.Len() == 0 {
		delete(s.keys, t.key)
	}
}

// dequeue takes t out of the waiting lines (under mu).
func (s *slots) dequeue(t *ticket) {
	q := s.queues[t.workspace]
	q.Remove(t.inQueue)
	t.inQueue = nil
	if q.Len() == 0 {
		delete(s.queues, t.workspace)
		for i, ws := range s.turns {
			if ws == t.workspace {
				s.turns = append(s.turns[:i], s.turns[i+1:]...)
				break
			}
		}
		s.forgetServed()
	}
	if t.inKey != nil {
		s.leaveKey(t)
	}
	s.waiting--
}

// pump hands free slots out (under mu): each to the workspace that got
// one least recently, among those with a ticket that may start, those
// holding less than their share (holdings) first.
func (s *slots) pump() {
	now := s.now()
	s.sweep(now)
	for s.running < s.size && len(s.turns) > 0 {
		order := s.holding.order(s.turns, s.served)
		spare := s.size-s.running <= s.holding.spare()
		granted := false
		for _, ws := range order {
			q := s.queues[ws]
			if q == nil {
				continue // pick emptied it, parking its tickets
			}
			if spare && !s.holding.mayTakeSpare(ws, s.turns, s.hold) {
				continue
			}
			t, done := s.pick(q, now)
			if t == nil {
				continue
			}
			s.dequeue(t)
			s.grants++
			s.served[ws] = s.grants
			s.running++
			t.startedAt = now
			s.holding.take(ws)
			s.peak = max(s.peak, s.running)
			if t.key != "" {
				s.busy[t.key] = true
			}
			t.answer <- grant{done: done}
			granted = true
			break
		}
		if !granted {
			break
		}
	}
	s.armWake(now)
}

// forgetServed bounds served: once it holds many workspaces that wait for
// nothing, it forgets them (under mu). A workspace forgotten counts as
// served long ago, which only matters if it comes back at once.
func (s *slots) forgetServed() {
	if len(s.served) <= 4*len(s.turns)+1024 {
		return
	}
	for ws := range s.served {
		if s.queues[ws] == nil {
			delete(s.served, ws)
		}
	}
}

// inMemoryPerDestination is how many of a workspace's messages may wait
// in memory for one refused destination; the rest wait durably, each
// booked a turn at the destination's pace, so a seller's backlog of
// thousands neither fills the scans nor comes back all at once.
const inMemoryPerDestination = 32

// maxInMemoryPerDestination bounds inMemoryFor: every slot freed scans
// the messages waiting.
const maxInMemoryPerDestination = 1024

// inMemoryFor is how many of a workspace's messages may wait in memory for
// a destination that refused with r: inMemoryPerDestination, or, for one
// that is only busy (its cap of calls in flight), as many as its calls
// end within the hold at their usual length. Those would be parked for
// less than the hold, each costing a transaction and a trip through the
// outbox and the broker, to come back when memory would have served them:
// after a receiver's outage, 12,000 deliveries to it came back and were
// parked again and again, and the parks' transactions slowed its calls
// (so more were parked).
func (s *slots) inMemoryFor(r Refusal) int {
	if r.Why != WhyBusy || r.Every <= 0 {
		return inMemoryPerDestination
	}
	return min(max(inMemoryPerDestination, int(s.hold/r.Every)), maxInMemoryPerDestination)
}

// DefaultOutageWait is how long a message parked for a destination that
// is down waits if no answer from it wakes it sooner.
const DefaultOutageWait = 10 * time.Minute

// pick is the first ticket of q that may start now, with its destination's
// permit. Tickets whose destination refuses for longer than hold, or
// beyond inMemoryFor of them, are told to wait durably on the way (under
// mu).
func (s *slots) pick(q *list.List, now time.Time) (*ticket, func(CallResult)) {
	skipped := map[string]int{}
	for e := q.Front(); e != nil; {
		t := e.Value.(*ticket)
		e = e.Next()
		if t.key != "" && (s.busy[t.key] || s.keys[t.key].Front().Value != t) {
			continue
		}
		if t.destination == "" || s.gate == nil {
			return t, nil
		}
		r, refused := s.blocked[t.destination]
		if !refused || !r.Until.After(now) {
			var done func(CallResult)
			if done, r = s.gate.Try(t.destination); done != nil {
				delete(s.blocked, t.destination)
				return t, done
			}
			if !r.Until.After(now) { // a refusal must end in the future, or nothing wakes the line
				r.Until = now.Add(time.Millisecond)
			}
			s.blocked[t.destination] = r
		}
		n := skipped[t.destination]
		skipped[t.destination] = n + 1
		wait := waitingFor(t.destination, r.Why)
		limit := s.inMemoryFor(r)
		switch {
		case r.Why == WhyBreakerOpen && r.Until.Sub(now) > s.hold:
			e = s.waitOutage(t, r, now, e)
		case r.Until.Sub(now) > s.hold:
			e = s.waitDurably(t, s.turn(t.destination, r, r.Until), wait, nil, e)
		case n >= limit:
			// Behind the ones waiting in memory, whose turns come first;
			// without a pace, a group of them per hold.
			earliest := r.Until.Add(time.Duration(limit) * r.Every)
			if r.Every <= 0 {
				earliest = r.Until.Add(time.Duration(n/limit) * s.hold)
			}
			e = s.waitDurably(t, s.turn(t.destination, r, earliest), wait, nil, e)
		}
	}
	return nil, nil
}

// turn is when a message parked for destination, refused with r, comes
// back: the next turn at its pace from earliest on, so those parked come
// back one call's time apart and find the call free; without a pace
// (r.Every 0), at earliest, spread over a hold (under mu).
func (s *slots) turn(destination string, r Refusal, earliest time.Time) time.Time {
	if r.Every <= 0 {
		return earliest.Add(rand.N(s.hold))
	}
	at := earliest
	if b, ok := s.booked[destination]; ok && b.After(at) {
		at = b
	}
	if len(s.booked) >= maxBooked {
		now := s.now()
		maps.DeleteFunc(s.booked, func(_ string, b time.Time) bool { return !b.After(now) })
	}
	s.booked[destination] = at.Add(r.Every)
	return at
}

// maxBooked bounds the destinations whose turns the slots remember
// before they forget those with none booked ahead.
const maxBooked = 4096

// waitDurably answers t, and every ticket of its ordering key behind it,
// with a durable wait until then (a microsecond apart, the database's
// resolution, so they come back in order); reservations of the key not
// yet in a line get theirs when they ask, and so do the key's later
// arrivals while the wait lasts; z, if they sleep through an outage. It
// returns where the scan of t's queue
// goes on: next, or past it if next was one of them.
func (s *slots) waitDurably(t *ticket, until time.Time, parked model.JobWait, z *sleepers, next *list.Element) *list.Element {
	line := []*ticket{t}
	if t.key != "" {
		line = line[:0]
		for e := s.keys[t.key].Front(); e != nil; e = e.Next() {
			line = append(line, e.Value.(*ticket))
		}
		s.keyWait[t.key] = keyLine{until: until.Add(time.Duration(len(line)) * time.Microsecond), asleep: z}
	}
	for i, w := range line {
		wait := &waitFor{until: until.Add(time.Duration(i) * time.Microsecond), wait: parked, asleep: z}
		if w.inQueue == nil { // a reservation
			w.parked = wait
			s.leaveKey(w)
			continue
		}
		for next != nil && next.Value.(*ticket) == w {
			next = next.Next()
		}
		s.dequeue(w)
		w.answer <- grant{wait: wait}
	}
	return next
}

// armWake pumps again when the earliest refusal of a destination some
// ticket waits for ends (under mu).
func (s *slots) armWake(now time.Time) {
	var soonest time.Time
	for d, r := range s.blocked {
		if !r.Until.After(now) {
			delete(s.blocked, d)
			if b, ok := s.booked[d]; ok && !b.After(now) {
				delete(s.booked, d) // no turn booked ahead: forgotten
			}
			continue
		}
		if soonest.IsZero() || r.Until.Before(soonest) {
			soonest = r.Until
		}
	}
	if soonest.IsZero() || s.waiting == 0 || (!s.wakeAt.IsZero() && !soonest.Before(s.wakeAt) && s.wakeAt.After(now)) {
		return
	}
	if s.wake != nil {
		s.wake.Stop()
	}
	s.wakeAt = soonest
	s.wake = time.AfterFunc(soonest.Sub(now), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.wakeAt = time.Time{}
		s.pump()
	})
}

// stats are the slots' gauges: running now, the most ever running at
// once, and messages waiting for one.
func (s *slots) stats() (running, peak, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.peak, s.waiting
}
