package queue

import (
	"maps"
	"math/rand/v2"
	"time"
)

// bookedTurns are the turns of the messages parked for a paced
// destination: each comes back one call's time after the one parked
// before it, so those parked come back apart and find the call free.
type bookedTurns struct {
	hold time.Duration
	next map[string]time.Time // per destination, the next free turn
}

func newBookedTurns(hold time.Duration) bookedTurns {
	return bookedTurns{hold: hold, next: map[string]time.Time{}}
}

// turn is when a message parked for destination, refused with r, comes
// back: the next turn at its pace from earliest on; without a pace
// (r.Every 0), at earliest, spread over a hold.
func (b *bookedTurns) turn(destination string, r Refusal, earliest, now time.Time) time.Time {
	if r.Every <= 0 {
		return earliest.Add(rand.N(b.hold))
	}
	at := earliest
	if next, ok := b.next[destination]; ok && next.After(at) {
		at = next
	}
	if len(b.next) >= maxBooked {
		maps.DeleteFunc(b.next, func(_ string, next time.Time) bool { return !next.After(now) })
	}
	b.next[destination] = at.Add(r.Every)
	return at
}

// forgetPast forgets destination's turns if none is booked past now.
func (b *bookedTurns) forgetPast(destination string, now time.Time) {
	if next, ok := b.next[destination]; ok && !next.After(now) {
		delete(b.next, destination)
	}
}

// maxBooked bounds the destinations whose turns the slots remember
// before they forget those with none booked ahead.
const maxBooked = 4096
