package dispatch

import (
	"math/rand/v2"
	"time"
)

// backoff is the delay before attempt+1 after `attempt` failures: full
// jitter over an exponential ceiling, min(max, base·2^(attempt-1)), so
// instances retrying the same broken broker spread out instead of
// stampeding together.
func backoff(attempt int, base, max time.Duration) time.Duration {
	ceiling := base
	for i := 1; i < attempt && ceiling < max; i++ {
		ceiling *= 2
	}
	if ceiling > max || ceiling <= 0 { // <= 0: overflow
		ceiling = max
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

// jitter returns d varied uniformly by ±frac (0.2 for ±20%).
func jitter(d time.Duration, frac float64) time.Duration {
	f := 1 - frac + 2*frac*rand.Float64()
	return time.Duration(float64(d) * f)
}
