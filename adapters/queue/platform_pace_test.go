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
)

// platformPacedGate refuses every shopify shop until then with the
// platform's pace (our application's bucket, which all of them spend),
// counting the Try calls.
type platformPacedGate struct {
	mu    sync.Mutex
	until time.Time
	tries int
}

func (g *platformPacedGate) Try(d string) (func(CallResult), Refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tries++
	if strings.HasPrefix(d, "shopify/") {
		return nil, Refusal{Until: g.until, Why: WhyPaced, Of: "shopify", Every: time.Millisecond}
	}
	return func(CallResult) {}, Refusal{}
}

// A platform's pace refuses every one of its shops alike: the slots ask
// the gate about one of them, and the others wait for the same refusal
// without asking, in memory.
func TestSlotsAskAPacedPlatformOncePerRefusal(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	gate := &platformPacedGate{until: now.Add(100 * time.Millisecond)}
	s := newSlots(1, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()
	blocker := acquireAsync(s, context.Background(), ws, "", "")
	<-blocker.done
	const shops = 5
	for i := range shops {
		acquireAsync(s, context.Background(), ws, fmt.Sprintf("shopify/s%d", i), "")
		queued(t, s, i+1)
	}
	blocker.release(CallResult{}) // pumps: the pick walks the five shops
	gate.mu.Lock()
	assert.Equal(t, 1, gate.tries)
	gate.mu.Unlock()
	_, _, waiting := s.stats()
	assert.Equal(t, shops, waiting)
}
