package dispatch

import (
	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// WakeOnEnds returns ends, which also wakes the Dispatchers (signal) when
// it is told that operations ended. A job's end is what lets the next
// event of its ordering key be claimed (claimDueEvents waits for it), and
// no event is committed then to wake anyone: without this the follower
// would go out at the Dispatchers' next poll, not at once.
//
// Every end wakes, not only those of keyed jobs: the end does not say
// whether its job had a key, and a wake costs little (Committed coalesces,
// one NOTIFY per few milliseconds per process, and a woken Dispatcher
// that finds nothing due makes one discovery round).
func WakeOnEnds(ends ports.OperationEnds, signal ports.DispatchSignal) ports.OperationEnds {
	return wakingEnds{OperationEnds: ends, signal: signal}
}

type wakingEnds struct {
	ports.OperationEnds
	signal ports.DispatchSignal
}

func (e wakingEnds) Ended(ids ...uuid.UUID) {
	e.OperationEnds.Ended(ids...)
	if len(ids) > 0 {
		e.signal.Committed()
	}
}
