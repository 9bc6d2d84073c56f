package queue

import (
	"maps"
	"time"

	"github.com/google/uuid"
)

// sweepEvery is how often the slots forget what they keep for messages
// parked long ago.
const sweepEvery = time.Minute

// sweep forgets, at most once per sweepEvery, what the slots keep for
// parked messages whose waits are over (under mu): a key's line parked
// until then (cleared otherwise only when a later message of the key
// arrives), a workspace's probe turn and a destination's sleepers
// (cleared otherwise only when a call to it is answered, so never for a
// dead endpoint or a deleted shop). Once the wait is over, each is what
// its absence means: the key's next message starts, the next refusal
// parks a probe, and the sleepers came back by themselves.
func (s *slots) sweep(now time.Time) {
	if now.Sub(s.sweptAt) < sweepEvery {
		return
	}
	s.sweptAt = now
	over := func(at time.Time) bool { return !at.After(now) }
	maps.DeleteFunc(s.keyWait, func(_ string, kl keyLine) bool { return over(kl.until) })
	for down, probes := range s.probeAt {
		maps.DeleteFunc(probes, func(_ uuid.UUID, at time.Time) bool { return over(at) })
		if len(probes) == 0 {
			delete(s.probeAt, down)
		}
	}
	maps.DeleteFunc(s.asleep, func(_ string, z *sleepers) bool { return over(z.until) })
}
