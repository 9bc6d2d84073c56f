package work

import (
	"time"

	"github.com/oncehq/once/domain/destinations"
)

// jobsPerSecond is n jobs over the span of one worker's run: from the
// first job's start, one call's latency before the first end (a job takes
// at least its call), to the last end.
func jobsPerSecond(n int, firstEnd, lastEnd time.Time, call time.Duration) float64 {
	d := lastEnd.Sub(firstEnd) + call
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// slotLimit is the most jobs/s slots can finish when each waits call on
// its external call: slots ÷ latency.
func slotLimit(slots int, call time.Duration) float64 {
	return float64(slots) / call.Seconds()
}

// cpuLimit is the most jobs/s the machine's cores can run when each job
// costs the worker cpu ÷ jobs of CPU time (0 when nothing was measured).
func cpuLimit(cores int, cpu time.Duration, jobs int) float64 {
	if cpu <= 0 || jobs == 0 {
		return 0
	}
	return float64(cores) / (cpu.Seconds() / float64(jobs))
}

// afterBurst is the rate of calls a leaky bucket let through once its
// burst was spent: the calls after the first b.capacity over the time
// from the capacity-th to the last (0 when there were no more).
func afterBurst(times []time.Time, b bucket) float64 {
	if len(times) <= b.capacity {
		return 0
	}
	d := times[len(times)-1].Sub(times[b.capacity-1])
	if d <= 0 {
		return 0
	}
	return float64(len(times)-b.capacity) / d.Seconds()
}

// bucketDuration is how long n calls take at best through b, from an
// empty bucket: the first b.capacity at once, the rest at b.leak a second.
func bucketDuration(n int, b bucket) time.Duration {
	if n <= b.capacity {
		return 0
	}
	return time.Duration(float64(n-b.capacity) / b.leak * float64(time.Second))
}

// ratio is a / b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// probeBound is the most calls an outage of length d should see from a
// fleet sharing one breaker of shape b: one probe at the end of each
// cooldown (the first b.Cooldown, doubling up to b.MaxCooldown) that ends
// within d, and 2 more: the slack for the calls that find it down
// before the fleet's breaker has opened.
func probeBound(d time.Duration, b destinations.BreakerConfig) int {
	probes := 0
	if b.Cooldown > 0 {
		for at, cooldown := b.Cooldown, b.Cooldown; at <= d; at += cooldown {
			probes++
			cooldown = min(2*cooldown, max(b.MaxCooldown, b.Cooldown))
		}
	}
	return probes + 2
}
