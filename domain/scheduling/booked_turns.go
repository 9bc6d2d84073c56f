package scheduling

import (
	"maps"
	"math/rand/v2"
	"time"
)

// BookedTurns are the turns of the messages parked for a paced
// destination: each comes back one call's time after the one parked
// before it, so those parked come back apart and find the call free.
type BookedTurns struct {
	hold time.Duration
	next map[string]time.Time // per destination, the next free turn
}

func NewBookedTurns(hold time.Duration) BookedTurns {
	return BookedTurns{hold: hold, next: map[string]time.Time{}}
}

// Turn is when a message parked for destination, refused with r, comes
// back: the next turn at its pace from earliest on; without a pace
// (r.Every 0), at earliest, spread over a hold.
func (b *BookedTurns) Turn(destination string, r Refusal, earliest, now time.Time) time.Time {
	if r.Every <= 0 {
		return earliest.Add(rand.N(b.hold))
	}
	at := earliest
	if next, ok := b.next[destination]; ok && next.After(at) {
		at = next
	}
	if len(b.next) >= MaxBooked {
		maps.DeleteFunc(b.next, func(_ string, next time.Time) bool { return !next.After(now) })
	}
	b.next[destination] = at.Add(r.Every)
	return at
}

// ForgetPast forgets destination's turns if none is booked past now.
func (b *BookedTurns) ForgetPast(destination string, now time.Time) {
	if next, ok := b.next[destination]; ok && !next.After(now) {
		delete(b.next, destination)
	}
}

// MaxBooked bounds the destinations whose turns are remembered
// before they forget those with none booked ahead.
const MaxBooked = 4096
