package queue

import "time"

// sweepEvery is how often the slots forget what they keep for messages
// parked long ago.
const sweepEvery = time.Minute

// sweep forgets, at most once per sweepEvery, what the slots keep for
// parked messages whose waits are over (under mu): a key's line parked
// until then (keyLines.sweep), a workspace's probe turn and a
// destination's sleepers (outages.sweep). Once the wait is over, each is
// what its absence means: the key's next message starts, the next refusal
// parks a probe, and the sleepers came back by themselves.
func (s *slots) sweep(now time.Time) {
	if now.Sub(s.sweptAt) < sweepEvery {
		return
	}
	s.sweptAt = now
	s.keyLines.sweep(now)
	s.outages.sweep(now)
	s.asks.sweep(now, s.hold)
}
