package queue

import (
	"container/list"
	"errors"
	"time"

	"github.com/google/uuid"
)

// ticket is one message waiting for a slot.
type ticket struct {
	workspace   uuid.UUID
	destination string
	key         string
	seq         uint64
	startedAt   time.Time // when it got its slot
	heldFor     string    // the destination it waits for in memory, set aside (workspaceLines.setAside)
	inKey       *list.Element
	// in is the line t waits in (nil: none), its workspace's or, if
	// heldFor, its destination's; prev and next its neighbours there.
	in         *ticketLine
	prev, next *ticket
	// bound counts its workspace's tickets bound for its destination
	// while it waits (workspaceLines.bound).
	bound  *boundFor
	answer chan grant // buffered: the pump never blocks on it
	// parked is set on a reservation whose key's line was parked before
	// its message asked for a slot: it is answered with it at once.
	parked *waitFor
	// asking: a slot is reserved for t while its goroutine asks the
	// gate (slots.ask); servedWas and servedAs are its workspace's turn
	// before and after, restored if the gate refuses.
	asking              bool
	servedWas, servedAs uint64
}

// grant is a ticket's answer: a slot (done reports its call to the destinations,
// nil without a destination), a durable wait, or stopped: the worker
// drains and the message is handed back unstarted.
type grant struct {
	// ask: a slot is reserved, to be taken once the destination's gate
	// grants the call (slots.ask).
	ask     bool
	done    func(CallResult)
	wait    *waitFor
	stopped bool
}

// errStopping is what acquire answers once the worker drains.
var errStopping = errors.New("not started: the worker is stopping")
