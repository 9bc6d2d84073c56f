package queue

import "time"

// asking is what the slots keep of the gate's asks in flight. A pick
// does not ask the gate itself: the gate of a fleet answers from Redis
// (two round trips), and the pump asked it holding the slots' lock, so
// every handler, release and wake of the worker waited on one ask at a
// time (98 % of the worker's lock waits, docs/benchmarks.md#work-round-six).
// A pick instead gives the ticket its slot, reserved, and the ticket's
// own goroutine asks (slots.ask): granted, the slot is its; refused,
// the slot goes back and the ticket waits as the refusal says.
//
// Asks of one destination go one at a time: the next is answered from
// what the first taught the gate (a refusal is remembered and asks no
// more), so a shop's backlog makes no burst of asks that its cap
// refuses. So do the asks of a platform whose pace refused within the
// hold: every ask spends its one bucket, and a burst would be refused
// but for one at each token.
type asking struct {
	destinations map[string]int       // asks in flight, per destination
	platforms    map[string]int       // asks in flight, per platformPace
	pacedAt      map[string]time.Time // when each platformPace last refused
	// ended: destinations a call of which ended while they were asked.
	// The call's end forgets its destination's refusal (finish), so the
	// next message asks again at once; a refusal the gate decided before
	// the end but answered after it is forgotten as it is remembered.
	ended map[string]bool
	// blocked: a pick passed a ticket whose destination (or platform)
	// was being asked since the last pump; a grant pumps again only
	// then, a refusal always (its slot is free).
	blocked bool
}

func newAsking() asking {
	return asking{destinations: map[string]int{}, platforms: map[string]int{}, pacedAt: map[string]time.Time{}, ended: map[string]bool{}}
}

// mayAsk: no ask of destination (or, if its platform paced lately, of
// its platform: pace) is in flight.
func (a *asking) mayAsk(destination, pace string, now time.Time, hold time.Duration) bool {
	if a.destinations[destination] > 0 {
		return false
	}
	if pace == "" || a.platforms[pace] == 0 {
		return true
	}
	at, paced := a.pacedAt[pace]
	return !paced || now.Sub(at) >= hold
}

// started counts an ask of destination in flight.
func (a *asking) started(destination, pace string) {
	a.destinations[destination]++
	if pace != "" {
		a.platforms[pace]++
	}
}

// callEnded notes that a call of destination ended, if it is being
// asked.
func (a *asking) callEnded(destination string) {
	if a.destinations[destination] > 0 {
		a.ended[destination] = true
	}
}

// answered counts it answered; endedMeanwhile: a call of destination
// ended since the ask started (callEnded).
func (a *asking) answered(destination, pace string) (endedMeanwhile bool) {
	if a.destinations[destination]--; a.destinations[destination] <= 0 {
		delete(a.destinations, destination)
		endedMeanwhile = a.ended[destination]
		delete(a.ended, destination)
	}
	if pace == "" {
		return endedMeanwhile
	}
	if a.platforms[pace]--; a.platforms[pace] <= 0 {
		delete(a.platforms, pace)
	}
	return endedMeanwhile
}

// paced notes that pace refused at now.
func (a *asking) paced(pace string, now time.Time) { a.pacedAt[pace] = now }

// sweep forgets the paces that refused a hold ago or more.
func (a *asking) sweep(now time.Time, hold time.Duration) {
	for pace, at := range a.pacedAt {
		if now.Sub(at) >= hold {
			delete(a.pacedAt, pace)
		}
	}
}

// ask is what a ticket's goroutine does with a slot reserved for it
// (grant.ask): it asks the gate, outside the lock, and then either takes
// the slot (the grant returned, ok) or gives it back, the ticket left
// waiting as the refusal says (not ok: wait for the ticket's next
// answer). A worker that drained meanwhile is answered stopped, and the
// call granted, if any, given back unmade.
func (s *slots) ask(t *ticket) (g grant, ok bool) {
	done, r := s.gate.Try(t.destination)
	s.mu.Lock()
	defer s.unlock()
	now := s.now()
	pace := platformPace(t.destination)
	endedMeanwhile := s.asks.answered(t.destination, pace)
	t.asking = false
	if s.closed {
		// close took the ticket out of the lines without an answer.
		if done != nil {
			done(CallResult{Abandoned: true})
		}
		s.unreserveSlot(t)
		return grant{stopped: true}, true
	}
	if done != nil {
		s.refused.Forget(t.destination)
		s.dequeue(t)
		s.start(t, now)
		if s.asks.blocked { // a pick passed a ticket this ask held back
			s.pump()
		}
		return grant{done: done}, true
	}
	s.unreserveSlot(t)
	hold := t.destination
	if isPlatformPace(r, pace) {
		hold = pace
		s.asks.paced(pace, now)
	}
	s.afterRefused(t, hold, s.refused.Remember(hold, r, now), now, nil)
	if endedMeanwhile && s.refused.Forget(t.destination) { // as finish would have, after
		s.putBack(t.destination)
	}
	s.pump()
	return grant{}, false
}

// unask gives back the slot reserved for t, whose goroutine will not ask
// (its context ended first), and takes t out of the lines (under mu),
// unless close took it out already.
func (s *slots) unask(t *ticket) {
	s.asks.answered(t.destination, platformPace(t.destination))
	t.asking = false
	s.unreserveSlot(t)
	if t.in != nil {
		s.dequeue(t)
	}
}

// reserveSlot holds a slot for t while its gate is asked (under mu):
// counted running, and in its workspace's share, so the pump gives no
// slot twice; t stays in its lines, first of its key's, skipped by picks.
func (s *slots) reserveSlot(t *ticket) {
	t.asking = true
	s.asks.started(t.destination, platformPace(t.destination))
	s.running++
	s.holding.Take(t.workspace)
	t.servedWas, t.servedAs = s.granted(t.workspace)
}

// unreserveSlot gives back the slot reserved for t (under mu): its
// workspace keeps its turn, as if never served.
func (s *slots) unreserveSlot(t *ticket) {
	s.running--
	s.holding.Untake(t.workspace)
	if s.ungranted(t.workspace, t.servedWas, t.servedAs) {
		return
	}
	// Served since: if by the reservation of another of its tickets,
	// asking still, that one's turn before is t's, which it would
	// restore if refused; it is t's turn before instead.
	if q := s.queues[t.workspace]; q != nil {
		for o := q.front; o != nil; o = o.next {
			if o.asking && o.servedWas == t.servedAs {
				o.servedWas = t.servedWas
				break
			}
		}
	}
}
