package work

import (
	"testing"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain/destinations"
)

func TestJobsPerSecondCountsTheFirstJobsCall(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// One slot at 200 ms: 5 jobs end 200 ms apart, the first 200 ms after
	// it started: 5 jobs in 1 s.
	if got := jobsPerSecond(5, t0, t0.Add(800*time.Millisecond), 200*time.Millisecond); got != 5 {
		t.Fatalf("jobsPerSecond = %v, want 5", got)
	}
	if got := jobsPerSecond(0, t0, t0, time.Second); got != 0 {
		t.Fatalf("no jobs: %v, want 0", got)
	}
}

func TestLimits(t *testing.T) {
	if got := slotLimit(256, 200*time.Millisecond); got != 1280 {
		t.Fatalf("slotLimit = %v, want 1280", got)
	}
	// 2 cores, 1 ms of CPU per job: 2,000 jobs/s.
	if got := cpuLimit(2, 2*time.Second, 2000); got != 2000 {
		t.Fatalf("cpuLimit = %v, want 2000", got)
	}
	if got := cpuLimit(2, 0, 10); got != 0 {
		t.Fatalf("cpuLimit without a measure = %v, want 0", got)
	}
}

func TestBucketRateAndDuration(t *testing.T) {
	b := bucket{capacity: 4, leak: 2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var times []time.Time
	for range 4 { // the burst, at once
		times = append(times, t0)
	}
	for i := 1; i <= 6; i++ { // then one every 500 ms
		times = append(times, t0.Add(time.Duration(i)*500*time.Millisecond))
	}
	if got := afterBurst(times, b); got != 2 {
		t.Fatalf("afterBurst = %v, want 2", got)
	}
	if got := afterBurst(times[:4], b); got != 0 {
		t.Fatalf("afterBurst of the burst alone = %v, want 0", got)
	}
	if got := bucketDuration(10, b); got != 3*time.Second {
		t.Fatalf("bucketDuration = %v, want 3s", got)
	}
	if got := bucketDuration(3, b); got != 0 {
		t.Fatalf("bucketDuration within the burst = %v, want 0", got)
	}
}

func TestPeakOverlap(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	spans := []simcore.Span{
		{Start: at(0), End: at(200)},
		{Start: at(100), End: at(300)},
		{Start: at(200), End: at(400)}, // starts as the first ends: two open, not three
		{Start: at(250)},               // still open
	}
	if got := peakOverlap(spans); got != 3 {
		t.Fatalf("peakOverlap = %d, want 3", got)
	}
	if got := peakOverlap(nil); got != 0 {
		t.Fatalf("peakOverlap of none = %d, want 0", got)
	}
}

func TestBusySince(t *testing.T) {
	from := cpuTimes{total: 1000, idle: 500}
	if got := (cpuTimes{total: 1200, idle: 550}).busySince(from); got != 0.75 {
		t.Fatalf("busySince = %v, want 0.75", got)
	}
}

func TestPercentilesByNearestRank(t *testing.T) {
	values := make([]float64, 0, 100)
	for i := 100; i >= 1; i-- {
		values = append(values, float64(i))
	}
	if got := percentiles(values); got.p50 != 50 || got.p99 != 99 {
		t.Fatalf("percentiles = %+v, want p50 50, p99 99", got)
	}
	if got := percentiles([]float64{3}); got.p50 != 3 || got.p99 != 3 {
		t.Fatalf("percentiles of one = %+v, want 3, 3", got)
	}
	if got := percentiles(nil); got != (latency{}) {
		t.Fatalf("percentiles of none = %+v, want zero", got)
	}
}

func TestProbeBoundCountsOneProbePerCooldownPlusTwo(t *testing.T) {
	b := destinations.BreakerConfig{Failures: 5, Cooldown: 5 * time.Second, MaxCooldown: 30 * time.Second}
	// Cooldowns end at 5, 15, 35, 65, 95 … s.
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{4 * time.Second, 2},
		{5 * time.Second, 3},
		{time.Minute, 5},       // 5, 15, 35
		{10 * time.Minute, 23}, // 5, 15, 35, then every 30 s to 575
	} {
		if got := probeBound(c.d, b); got != c.want {
			t.Errorf("probeBound(%s) = %d, want %d", c.d, got, c.want)
		}
	}
}
