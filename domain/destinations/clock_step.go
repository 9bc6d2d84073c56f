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

// stepBack is how far the clock stepped back between the last reading
// and now (0: it did not), and takes now as the last reading.
func (r *readings) stepBack(now time.Time) time.Duration {
	back := r.last.Sub(now)
	r.last = now
	return max(back, 0)
}

// earlier is t moved back by d; the zero time (unset) stays zero.
func earlier(t time.Time, d time.Duration) time.Time {
	if t.IsZero() || d == 0 {
		return t
	}
	return t.Add(-d)
}
