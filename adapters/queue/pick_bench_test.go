package queue

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// countingGate refuses every destination in refused until then (busy,
// a short wait: its messages wait in memory) and grants the others,
// counting the Try calls.
type countingGate struct {
	mu      sync.Mutex
	refused map[string]time.Time
	tries   int
}

func (g *countingGate) Try(d string) (func(CallResult), Refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tries++
	if until, ok := g.refused[d]; ok {
		return nil, Refusal{Until: until, Why: WhyBusy, Every: 10 * time.Millisecond}
	}
	return func(CallResult) {}, Refusal{}
}

// BenchmarkPickAmong2000WaitingShops is one job started and ended while
// 2,000 messages of as many shops wait in memory for their destinations
// (busy, for less than the hold), ahead of it in its workspace's line:
// each pick must not walk them, nor ask the gate about them again.
func BenchmarkPickAmong2000WaitingShops(b *testing.B) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	const shops = 2000
	gate := &countingGate{refused: map[string]time.Time{}}
	for i := range shops {
		gate.refused[fmt.Sprintf("shopify/s%d", i)] = now.Add(time.Second)
	}
	s := newSlots(8, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range shops {
		go func() { _, _, _ = s.acquire(ctx, ws, fmt.Sprintf("shopify/s%d", i), "", nil) }()
	}
	for {
		if _, _, waiting := s.stats(); waiting == shops {
			break
		}
		time.Sleep(time.Millisecond)
	}
	gate.mu.Lock()
	gate.tries = 0
	gate.mu.Unlock()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		release, wait, err := s.acquire(ctx, ws, "shopify/open", "", nil)
		if err != nil || wait != nil {
			b.Fatalf("not started: %v %v", err, wait)
		}
		release(CallResult{})
	}
	b.StopTimer()
	gate.mu.Lock()
	b.ReportMetric(float64(gate.tries)/float64(b.N), "tries/op")
	gate.mu.Unlock()
}
