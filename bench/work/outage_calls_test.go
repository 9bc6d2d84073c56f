package work

import (
	"testing"
	"time"
)

func TestSplitOutageCallsSeparatesTheOpeningStreakFromTheProbes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// Six calls 100 ms apart open the breaker; probes at 5, 15 and 35 s
	// after, one of them (15.3 s) sent twice. Given out of order.
	starts := []time.Time{at(35500), at(0), at(100), at(200), at(300), at(400), at(500),
		at(5500), at(15500), at(15800)}
	got := splitOutageCalls(starts, 5*time.Second)
	if want := (outageCalls{opening: 6, probes: 4, doubled: 1}); got != want {
		t.Fatalf("splitOutageCalls = %+v, want %+v", got, want)
	}
	if got := splitOutageCalls(nil, 5*time.Second); got != (outageCalls{}) {
		t.Fatalf("no calls: %+v, want none", got)
	}
	// A streak that never ended: every call is of the opening.
	if got := splitOutageCalls([]time.Time{at(0), at(100)}, 5*time.Second); got != (outageCalls{opening: 2}) {
		t.Fatalf("only a streak: %+v, want opening 2", got)
	}
}
