package queue

import "time"

// afterRefusal decides what a message whose destination refused it a
// call does (a pure decision: the slots carry it out). A wait longer
// than hold is not spent in a slot nor in memory: the message is parked
// durably, for a destination that is down as its outage policy says
// (outages), otherwise until its turn at the destination's pace
// (bookedTurns). A shorter wait is spent in memory, by at most
// inMemoryFor of a workspace's messages per destination; the rest are
// parked behind them.
type afterRefusal struct {
	hold time.Duration
}

// refusalAction is what a refused message does.
type refusalAction int

const (
	// keepInMemory: it waits in its line for the refusal to end.
	keepInMemory refusalAction = iota
	// parkForOutage: its destination is down; it is parked as the
	// outages say (a probe, or asleep).
	parkForOutage
	// parkForTurn: it is parked until its turn, from earliest on.
	parkForTurn
)

// refusalDecision is afterRefusal's answer: the action, and for
// parkForTurn the earliest its turn may be.
type refusalDecision struct {
	action   refusalAction
	earliest time.Time
}

// decide is what a message does whose destination refused with r at
// now, when ahead of it inMemory of its workspace's messages already wait
// in memory for that destination.
func (p afterRefusal) decide(r Refusal, now time.Time, inMemory int) refusalDecision {
	limit := p.inMemoryFor(r)
	switch {
	case r.Why == WhyBreakerOpen && r.Until.Sub(now) > p.hold:
		return refusalDecision{action: parkForOutage}
	case r.Until.Sub(now) > p.hold:
		return refusalDecision{action: parkForTurn, earliest: r.Until}
	case inMemory >= limit:
		// Behind the ones waiting in memory, whose turns come first;
		// without a pace, a group of them per hold.
		earliest := r.Until.Add(time.Duration(limit) * r.Every)
		if r.Every <= 0 {
			earliest = r.Until.Add(time.Duration(inMemory/limit) * p.hold)
		}
		return refusalDecision{action: parkForTurn, earliest: earliest}
	}
	return refusalDecision{action: keepInMemory}
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
func (p afterRefusal) inMemoryFor(r Refusal) int {
	if r.Why != WhyBusy || r.Every <= 0 {
		return inMemoryPerDestination
	}
	return min(max(inMemoryPerDestination, int(p.hold/r.Every)), maxInMemoryPerDestination)
}
