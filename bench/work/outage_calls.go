package work

import (
	"slices"
	"time"
)

// outageCalls is how the calls that reached a platform while it was down
// fall: the opening streak (the calls before the fleet's breaker opened,
// which take cfg.Failures failures and whatever was already under way),
// then the probes; and of the probes, how many came less than half a
// first cooldown after the one before: a second probe in one cooldown,
// which one breaker for the fleet must never let go.
type outageCalls struct {
	opening, probes, doubled int
}

// splitOutageCalls splits the starts of the calls answered while down:
// the opening streak ends at the first gap of half the breaker's first
// cooldown or more (its calls arrive at the jobs' rate, the first probe a
// whole cooldown after the breaker opened); every later call is a probe.
func splitOutageCalls(starts []time.Time, cooldown time.Duration) outageCalls {
	starts = slices.SortedFunc(slices.Values(starts), time.Time.Compare)
	var c outageCalls
	gap := cooldown / 2
	for i, at := range starts {
		switch {
		case c.probes == 0 && (i == 0 || at.Sub(starts[i-1]) < gap):
			c.opening++
		default:
			c.probes++
			if c.probes > 1 && at.Sub(starts[i-1]) < gap {
				c.doubled++
			}
		}
	}
	return c
}
