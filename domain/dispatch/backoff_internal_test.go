package dispatch

import (
	"testing"
	"time"
)

func TestBackoffIsFullJitterUnderAnExponentialCeilingCappedAtMax(t *testing.T) {
	base, max := time.Second, 10*time.Minute
	for attempt := 1; attempt <= 40; attempt++ {
		ceiling := min(max, base<<min(attempt-1, 30))
		for range 200 {
			d := backoff(attempt, base, max)
			if d < 0 || d > ceiling {
				t.Fatalf("attempt %d: backoff %s outside [0, %s]", attempt, d, ceiling)
			}
		}
	}
}

func TestJitterStaysWithinTwentyPercent(t *testing.T) {
	for range 1000 {
		d := jitter(time.Second, 0.2)
		if d < 800*time.Millisecond || d > 1200*time.Millisecond {
			t.Fatalf("jitter %s outside ±20%%", d)
		}
	}
}
