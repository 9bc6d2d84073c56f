package destinations

import "time"

// readings notices the wall clock stepping back (NTP, a VM resumed): the
// gate's clock has no monotonic reading, so a time it stored a moment ago
// (a bucket's last refill, a Retry-After's or a cooldown's end) is then
// ahead of "now" by the step, and a wait measured against it would last
// the step longer: an hour's step would refuse every call to a paced
// destination for an hour. A holder of such times moves them back by the
// step (stepBack), so each wait keeps what it had left and the time
// elapsed since a step counts from the new reading.
type readings struct{ last time.Time }

// minStep is the least step back that readings acts on. Two calls that
// read the clock just before they take the gate's lock may take it in the
// other order, microseconds or milliseconds apart: that is no step, and
// moving the times back by it would hand out tokens never earned. NTP
// slews an offset below 128 ms and steps a larger one; a step shorter
// than minStep costs a wait at most that much longer.
const minStep = 100 * time.Millisecond

// stepBack is how far the clock stepped back between the latest reading
// and now (0: it did not, or by less than minStep), and keeps the latest.
func (r *readings) stepBack(now time.Time) time.Duration {
	back := r.last.Sub(now)
	if back < minStep {
		if back < 0 {
			r.last = now
		}
		return 0
	}
	r.last = now
	return back
}

// earlier is t moved back by d; the zero time (unset) stays zero.
func earlier(t time.Time, d time.Duration) time.Time {
	if t.IsZero() || d == 0 {
		return t
	}
	return t.Add(-d)
}
