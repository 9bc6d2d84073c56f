package scheduling

import "time"

// AfterRefusal decides what a message whose destination refused it a
// call does (a pure decision: the slots carry it out). A wait longer
// than hold is not spent in a slot nor in memory: the message is parked
// durably, for a destination that is down as the worker's outage policy
// says (a probe, or asleep), otherwise until its turn at the
// destination's pace (BookedTurns). A shorter wait is spent in memory, by at most
// InMemoryFor of a workspace's messages per destination; the rest are
// parked behind them.
type AfterRefusal struct {
	Hold time.Duration
}

// Action is what a refused message does.
type Action int

const (
	// KeepInMemory: it waits in its line for the refusal to end.
	KeepInMemory Action = iota
	// ParkForOutage: its destination is down; it is parked as the
	// worker's outage policy says (a probe, or asleep).
	ParkForOutage
	// ParkForTurn: it is parked until its turn, from earliest on.
	ParkForTurn
)

// Decision is AfterRefusal's answer: the Action, and for
// ParkForTurn the earliest its turn may be.
type Decision struct {
	Action   Action
	Earliest time.Time
}

// Decide is what a message does whose destination refused with r at
// now, when ahead of it inMemory of its workspace's messages already wait
// in memory for that destination.
func (p AfterRefusal) Decide(r Refusal, now time.Time, inMemory int) Decision {
	limit := p.InMemoryFor(r)
	switch {
	case r.Why == WhyBreakerOpen && r.Until.Sub(now) > p.Hold:
		return Decision{Action: ParkForOutage}
	case r.Until.Sub(now) > p.Hold:
		return Decision{Action: ParkForTurn, Earliest: r.Until}
	case inMemory >= limit:
		// Behind the ones waiting in memory, whose turns come first;
		// without a pace, a group of them per hold.
		earliest := r.Until.Add(time.Duration(limit) * r.Every)
		if r.Every <= 0 {
			earliest = r.Until.Add(time.Duration(inMemory/limit) * p.Hold)
		}
		return Decision{Action: ParkForTurn, Earliest: earliest}
	}
	return Decision{Action: KeepInMemory}
}

// InMemoryPerDestination is how many of a workspace's messages may wait
// in memory for one refused destination; the rest wait durably, each
// booked a turn at the destination's pace, so a seller's backlog of
// thousands neither fills the scans nor comes back all at once.
const InMemoryPerDestination = 32

// MaxInMemoryPerDestination bounds InMemoryFor: every slot freed scans
// the messages waiting.
const MaxInMemoryPerDestination = 1024

// InMemoryFor is how many of a workspace's messages may wait in memory for
// a destination that refused with r: InMemoryPerDestination, or, for one
// that is only busy (its cap of calls in flight), as many as its calls
// end within the hold at their usual length. Those would be parked for
// less than the hold, each costing a transaction and a trip through the
// outbox and the broker, to come back when memory would have served them:
// after a receiver's outage, 12,000 deliveries to it came back and were
// parked again and again, and the parks' transactions slowed its calls
// (so more were parked).
func (p AfterRefusal) InMemoryFor(r Refusal) int {
	if r.Why != WhyBusy || r.Every <= 0 {
		return InMemoryPerDestination
	}
	return min(max(InMemoryPerDestination, int(p.Hold/r.Every)), MaxInMemoryPerDestination)
}
