package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A destination that is down and never answers again (a dead endpoint, a
// deleted shop) leaves nothing behind once its parked messages' waits are
// over: its probes' turns, its sleepers, and its keys' lines.
func TestSlotsForgetADestinationThatNeverAnswers(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	clock := now
	gate := &fakeGate{refuse: map[string]time.Time{"webhook/dead": now.Add(30 * time.Second)}}
	s := newSlots(2, 2*time.Second, gate, func() time.Time { return clock }) // read under s.mu
	ws := uuid.New()
	for _, key := range []string{"order/1", "order/2", "order/3"} {
		w := acquireAsync(s, context.Background(), ws, "webhook/dead", key)
		<-w.done
		require.NotNil(t, w.wait)
	}
	s.mu.Lock()
	require.NotEmpty(t, s.probeAt)
	require.NotEmpty(t, s.asleep)
	require.NotEmpty(t, s.keyWait)
	clock = now.Add(2 * DefaultOutageWait) // every wait is over
	s.mu.Unlock()

	w := acquireAsync(s, context.Background(), uuid.New(), "", "") // any later message
	<-w.done
	w.release(CallResult{})
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.probeAt, "probes' turns")
	assert.Empty(t, s.asleep, "sleepers")
	assert.Empty(t, s.keyWait, "keys' lines")
}
