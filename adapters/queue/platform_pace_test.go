package queue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// platformPacedGate refuses every shopify shop until then, while it is
// not zero, with the platform's pace (our application's bucket, which
// all of them spend), counting the Try calls.
type platformPacedGate struct {
	mu    sync.Mutex
	until time.Time
	tries int
}

func (g *platformPacedGate) Try(d string) (func(CallResult), Refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tries++
	if !g.until.IsZero() && strings.HasPrefix(d, "shopify/") {
		return nil, Refusal{Until: g.until, Why: WhyPaced, Of: "shopify", Every: time.Millisecond}
	}
	return func(CallResult) {}, Refusal{}
}

// A platform's pace refuses every one of its shops alike: the slots ask
// the gate about one of them, and the others wait for the same refusal
// in memory without asking; when it ends, they ask again.
func TestSlotsAskAPacedPlatformOncePerRefusal(t *testing.T) {
	start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	now := start
	gate := &platformPacedGate{until: start.Add(10 * time.Millisecond)}
	s := newSlots(1, 2*time.Second, gate, func() time.Time { clock.Lock(); defer clock.Unlock(); return now })
	ws := uuid.New()
	blocker := acquireAsync(s, context.Background(), ws, "", "")
	<-blocker.done
	const shops = 5
	var waiters []*waiter
	for i := range shops {
		waiters = append(waiters, acquireAsync(s, context.Background(), ws, fmt.Sprintf("shopify/s%d", i), ""))
		queued(t, s, i+1)
	}
	blocker.release(CallResult{}) // pumps: the pick walks the five shops
	require.Eventually(t, func() bool { gate.mu.Lock(); defer gate.mu.Unlock(); return gate.tries > 0 }, 10*time.Second, time.Millisecond)
	asksAnswered(t, s)
	gate.mu.Lock()
	assert.Equal(t, 1, gate.tries)
	gate.until = time.Time{} // the bucket has a token again
	gate.mu.Unlock()
	_, _, waiting := s.stats()
	assert.Equal(t, shops, waiting)

	clock.Lock()
	now = start.Add(10 * time.Millisecond) // the pace's refusal ends: its wake pumps
	clock.Unlock()
	<-waiters[0].done // the first to arrive, put back first in its line
	require.NotNil(t, waiters[0].release)
	for _, w := range waiters[1:] {
		assert.False(t, w.ended(), "one slot")
	}
}
