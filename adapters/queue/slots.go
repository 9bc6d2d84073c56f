package queue

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/scheduling"
)

// slots hands a worker's Concurrency slots to the messages waiting for
// one. A message holds no slot while it waits, and the order it gets one
// in is the policy of the work side, each part in a type of its own:
//
//   - Fair between workspaces (holdings): each slot freed goes to the
//     workspace with a message waiting that got one least recently, among
//     those holding less than their share first, so one workspace's
//     backlog of thousands, or its calls of 14 s, takes at most its share
//     of the slots while others have messages.
//   - Ordered per key (keyLines): of the messages with one ordering key,
//     only the first to arrive may start, and only once none of the key
//     runs.
//   - Paced per destination: a message starts only when its destination's
//     state (Destinations) grants the call; a refusal is remembered until
//     it ends (refusals), and what the message does meanwhile is
//     afterRefusal's decision: wait in memory, or be parked durably until
//     its turn at the destination's pace (bookedTurns) or, for a
//     destination that is down, as a probe or asleep (outages), with every
//     message of its ordering key behind it.
//
// slots itself only carries those decisions out: it answers the waiting
// goroutines, arms the timer that pumps again when a refusal ends, and
// starts the wakes the outages return once its lock is let go.
//
// The messages waiting are the ones the broker handed out (the
// subscriber's prefetch), so the lookahead is as deep as that.
type slots struct {
	size int
	hold time.Duration
	gate Destinations
	now  func() time.Time
	// woken hears that a destination some messages were parked long for
	// answers again: the workspaces whose messages were parked for its
	// outage, and how many each. It runs in a goroutine of its own.
	woken func(destination string, workspaces map[uuid.UUID]int)

	mu      sync.Mutex
	closed  bool // no ticket gets a slot any more (the worker drains)
	running int
	peak    int
	seq     uint64
	workspaceLines
	holding scheduling.Holdings // the slots each workspace holds, for its fair share
	keyLines
	refused       scheduling.Refusals // destinations (and platforms' paces: platformPace) refused until then (the destinations's answer, cached)
	refusalsEnded []string            // the destinations whose refusals expireRefusals found ended, kept between calls
	afterRefusal  scheduling.AfterRefusal
	booked        scheduling.BookedTurns
	asks          asking // the gate's asks in flight (slots_ask.go)
	outages
	wakes   []wake // returned by the outages, started once mu is let go (unlock)
	wake    *time.Timer
	wakeAt  time.Time
	sweptAt time.Time // see sweep
}

// close gives no slot any more: every ticket waiting, and every one to
// come, is answered stopped, so a draining worker waits for the jobs
// running and not for its buffer.
func (s *slots) close() {
	s.mu.Lock()
	defer s.unlock()
	s.shut()
}

// shut is close's work (under mu).
func (s *slots) shut() {
	s.closed = true
	for _, k := range s.keys {
		for e := k.Front(); e != nil; e = e.Next() {
			if t := e.Value.(*ticket); t.in == nil {
				t.parked = nil // answered stopped when it asks
			}
		}
	}
	for t := s.first(); t != nil; t = s.first() {
		s.dequeue(t)
		if !t.asking { // one asking is answered once the gate is (ask)
			t.answer <- grant{stopped: true}
		}
	}
}

func newSlots(size int, hold time.Duration, gate Destinations, now func() time.Time) *slots {
	if now == nil {
		now = time.Now
	}
	return &slots{
		size: size, hold: hold, gate: gate, now: now, holding: scheduling.NewHoldings(size),
		workspaceLines: newWorkspaceLines(), keyLines: newKeyLines(), refused: scheduling.NewRefusals(),
		afterRefusal: scheduling.AfterRefusal{Hold: hold}, booked: scheduling.NewBookedTurns(hold), asks: newAsking(), outages: newOutages(),
	}
}

// unlock lets mu go, then starts the wakes the outages returned meanwhile:
// a wake is a transaction per workspace, never run under the lock.
func (s *slots) unlock() {
	wakes := s.wakes
	s.wakes = nil
	s.mu.Unlock()
	for _, w := range wakes {
		if s.woken == nil {
			close(w.ran)
			continue
		}
		go func() {
			defer close(w.ran)
			s.woken(w.destination, w.workspaces)
		}()
	}
}

// reserve holds a place in key's line for a message the broker just
// handed out, before its goroutine asks for a slot: the router runs each
// message in a goroutine of its own, and those may ask out of order. The
// reservation is acquire's to fill in, or cancel's to drop.
func (s *slots) reserve(key string) *ticket {
	s.mu.Lock()
	defer s.unlock()
	s.seq++
	t := &ticket{key: key, seq: s.seq, answer: make(chan grant, 1)}
	s.join(t)
	return t
}

// cancel drops a reservation whose message will not ask for a slot.
func (s *slots) cancel(t *ticket) {
	s.mu.Lock()
	defer s.unlock()
	if t.in == nil && t.inKey != nil {
		s.leave(t)
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
	for {
		select {
		case g := <-t.answer:
			if g.ask {
				var ok bool
				if g, ok = s.ask(t); !ok {
					continue // refused: waits again
				}
			}
			if g.stopped {
				return nil, nil, nil, errStopping
			}
			teach, release = s.releaser(t, g)
			return teach, release, g.wait, nil
		case <-ctx.Done():
		}
		break
	}
	s.mu.Lock()
	defer s.unlock()
	if t.asking { // given a slot to ask for, unread
		s.unask(t)
		s.pump()
		return nil, nil, nil, context.Cause(ctx)
	}
	if t.in != nil {
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
	defer s.unlock()
	if t == nil || t.key != key {
		if t != nil && t.inKey != nil {
			s.leave(t)
		}
		s.seq++
		t = &ticket{key: key, seq: s.seq, answer: make(chan grant, 1)}
		if key != "" {
			s.join(t)
		}
	}
	if s.closed {
		if t.inKey != nil {
			s.leave(t)
		}
		return nil, nil, errStopping
	}
	if t.parked != nil {
		return nil, t.parked, nil
	}
	if behind := s.behindParked(key, workspace, s.now()); behind != nil {
		s.leave(t)
		return nil, behind, nil
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
			defer s.unlock()
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
	s.holding.Give(t.workspace, s.now().Sub(t.startedAt))
	s.ended(t.key)
	if t.destination != "" {
		s.asks.callEnded(t.destination)
		if s.refused.Forget(t.destination) { // a call ended: its destination may take another
			s.putBack(t.destination)
		}
		if !r.Failed && !r.Abandoned {
			s.answered(t.destination, t.startedAt)
		}
	}
	s.pump()
}

// answered: a call to destination, started at startedAt, was answered
// (under mu). The outages' wakes are started once mu is let go; the
// woken keys' later arrivals wait only a hold behind them.
func (s *slots) answered(destination string, startedAt time.Time) {
	now := s.now()
	wakes, keys := s.outages.answered(destination, startedAt, now)
	for _, k := range keys {
		s.keyLines.woken(k, now.Add(s.hold))
	}
	s.wakes = append(s.wakes, wakes...)
}

// answeredAfterWait: a job of workspace, bound for destination, that had
// been parked for a wait of kind waited for waitedFor reached it (see
// outages.answeredAfterWait). It returns once the wakes that stand for
// the job's answer have run, its own or the one that spared it (this
// worker's answered call, perhaps the job's own): the job's message is
// acknowledged after, so a worker killed -9 before they commit leaves it
// to come again and wake them, wherever it runs (Worker.takeSlot).
// Acknowledged first, it would leave them asleep the full outage wait:
// the job is over, and the other jobs that could wake them are asleep.
func (s *slots) answeredAfterWait(workspace uuid.UUID, destination string, waited model.JobWaitKind, waitedFor string) {
	if s.woken == nil {
		return
	}
	s.mu.Lock()
	wakes, ran := s.outages.answeredAfterWait(workspace, destination, waited, waitedFor, s.now())
	s.wakes = append(s.wakes, wakes...)
	s.unlock()
	for _, r := range ran {
		<-r
	}
}

// dequeue takes t out of the waiting lines (under mu).
func (s *slots) dequeue(t *ticket) {
	s.remove(t)
	if t.inKey != nil {
		s.leave(t)
	}
}

// pump hands free slots out (under mu): each to the workspace that got
// one least recently, among those with a ticket that may start, those
// holding less than their share (holdings) first.
func (s *slots) pump() {
	now := s.now()
	s.asks.blocked = false
	s.sweep(now)
	s.expireRefusals(now)
	for s.running < s.size && len(s.turns) > 0 {
		order := s.holding.Order(s.turns, s.served)
		spare := s.size-s.running <= s.holding.Spare()
		granted := false
		for ws := range order {
			q := s.queues[ws]
			if q == nil {
				continue // pick emptied it, parking its tickets
			}
			if spare && !s.holding.MayTakeSpare(ws, s.turns, s.hold) {
				continue
			}
			t, done, ask := s.pick(q, now)
			if t == nil {
				continue
			}
			if ask {
				s.reserveSlot(t)
				t.answer <- grant{ask: true}
			} else {
				s.dequeue(t)
				s.granted(ws)
				s.running++
				s.holding.Take(ws)
				s.start(t, now)
				t.answer <- grant{done: done}
			}
			granted = true
			break
		}
		if !granted {
			break
		}
	}
	s.armWake(now)
}

// start marks t, out of the lines with its slot, as started at now
// (under mu).
func (s *slots) start(t *ticket, now time.Time) {
	t.startedAt = now
	s.peak = max(s.peak, s.running)
	s.started(t.key)
}

// pick is the first ticket of q that may start now: with no destination
// to ask (done nil, not ask), or whose destination's gate is to be asked
// (ask), by the ticket's goroutine with a slot reserved (see asking).
// Tickets whose destination's refusal is remembered are kept in memory,
// set aside until the refusal ends (setAside), or parked on the way, as
// afterRefusal decides (under mu): a pick walks only the tickets that
// may ask, and the gate is asked once per destination per refusal.
func (s *slots) pick(q *ticketLine, now time.Time) (t *ticket, done func(CallResult), ask bool) {
	for e := q.front; e != nil; {
		t := e
		e = e.next
		if t.asking || !s.mayStart(t) {
			continue
		}
		if t.destination == "" || s.gate == nil {
			return t, nil, false
		}
		hold, pace := t.destination, platformPace(t.destination)
		r, refused := s.refused.Of(t.destination, now)
		if !refused && pace != "" {
			if r, refused = s.refused.Of(pace, now); refused {
				hold = pace
			}
		}
		if !refused {
			if s.asks.mayAsk(t.destination, pace, now, s.hold) {
				return t, nil, true
			}
			s.asks.blocked = true
			continue // asks once the ask in flight is answered
		}
		e = s.afterRefused(t, hold, r, now, e)
	}
	return nil, nil, false
}

// afterRefused keeps t, refused (r, remembered under hold), in memory,
// or parks it, as afterRefusal decides (under mu). It returns where a
// scan of t's line goes on: next, or past it (see waitDurably).
func (s *slots) afterRefused(t *ticket, hold string, r Refusal, now time.Time, next *ticket) *ticket {
	switch d := s.afterRefusal.Decide(r, now, s.heldCount(t)); d.Action {
	case scheduling.KeepInMemory:
		s.setAside(t, hold)
	case scheduling.ParkForOutage:
		until, wait, z := s.outages.park(t.workspace, t.destination, t.key, r, now, s.hold)
		next = s.waitDurably(t, until, wait, z, next)
	case scheduling.ParkForTurn:
		next = s.waitDurably(t, s.booked.Turn(t.destination, r, d.Earliest, now), waitingFor(t.destination, r.Why), nil, next)
	}
	return next
}

// waitDurably answers t, and every ticket of its ordering key behind it,
// with a durable wait until then (a microsecond apart, the database's
// resolution, so they come back in order); reservations of the key not
// yet in a line get theirs when they ask, and so do the key's later
// arrivals while the wait lasts; z, if they sleep through an outage. It
// returns where the scan of t's queue
// goes on: next, or past it if next was one of them.
func (s *slots) waitDurably(t *ticket, until time.Time, parked model.JobWait, z *sleepers, next *ticket) *ticket {
	line := []*ticket{t}
	if t.key != "" {
		line = s.keyLines.line(t.key)
		s.keyLines.parked(t.key, until.Add(time.Duration(len(line))*time.Microsecond), z)
	}
	for i, w := range line {
		wait := &waitFor{until: until.Add(time.Duration(i) * time.Microsecond), wait: parked, asleep: z}
		if w.in == nil { // a reservation
			w.parked = wait
			s.leave(w)
			continue
		}
		for next != nil && next == w {
			next = next.next
		}
		s.dequeue(w)
		w.answer <- grant{wait: wait}
	}
	return next
}

// armWake pumps again when the earliest refusal of a destination some
// ticket waits for ends (under mu).
func (s *slots) armWake(now time.Time) {
	soonest := s.expireRefusals(now)
	if soonest.IsZero() || s.waiting == 0 || (!s.wakeAt.IsZero() && !soonest.Before(s.wakeAt) && s.wakeAt.After(now)) {
		return
	}
	if s.wake != nil {
		s.wake.Stop()
	}
	s.wakeAt = soonest
	s.wake = time.AfterFunc(soonest.Sub(now), func() {
		s.mu.Lock()
		defer s.unlock()
		s.wakeAt = time.Time{}
		s.pump()
	})
}

// expireRefusals forgets the refusals over at now (under mu) and says
// when the soonest of the others ends (zero: none). The tickets of the
// destinations whose refusals ended, waiting in memory, may ask them
// again: they are put back together (a platform's pace ends many at
// once), and their turns are forgotten if none is booked ahead.
func (s *slots) expireRefusals(now time.Time) time.Time {
	s.refusalsEnded = s.refusalsEnded[:0]
	soonest := s.refused.Expire(now, func(destination string) {
		s.refusalsEnded = append(s.refusalsEnded, destination)
		s.booked.ForgetPast(destination, now)
	})
	s.putBack(s.refusalsEnded...)
	clear(s.refusalsEnded)
	return soonest
}

// stats are the slots' gauges: running now, the most ever running at
// once, and messages waiting for one.
func (s *slots) stats() (running, peak, waiting int) {
	s.mu.Lock()
	defer s.unlock()
	return s.running, s.peak, s.waiting
}
