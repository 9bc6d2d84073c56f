package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/testkit"
)

// Workspace H's calls never end (a receiver that answers after 14 s,
// held here until released) while workspace N's end at once: once H has
// given up one slot, N keeps it for job after job, since H holds more
// than its half of the slots; H gets a slot again only when it holds
// less than its share.
func TestSlotsHoldAWorkspaceToItsShareWhileOthersWait(t *testing.T) {
	s := newSlots(4, time.Second, nil, nil)
	h, n := uuid.New(), uuid.New()
	held := started(s, h, "webhook/h", 4) // alone, H may take every slot
	var backlog []*waiter
	for i := range 8 {
		backlog = append(backlog, acquireAsync(s, context.Background(), h, "webhook/h", ""))
		queued(t, s, i+1)
	}
	var fast []*waiter
	for i := range 4 {
		fast = append(fast, acquireAsync(s, context.Background(), n, "webhook/n", ""))
		queued(t, s, 8+i+1)
	}

	held[0].release(CallResult{}) // the one slot H gives up in this test
	for i, w := range fast {
		// The slot freed goes to N's next job or to H's backlog.
		require.Eventually(t, func() bool { return w.ended() || backlog[0].ended() }, 10*time.Second, time.Millisecond)
		require.False(t, backlog[0].ended(), "H, holding 3 of 4 slots, took the slot before N's job %d", i)
		require.NotNil(t, w.release, "N's job %d got a slot", i)
		w.release(CallResult{})
	}
	<-backlog[0].done // N has nothing left: H may have it back
	running, _, _ := s.stats()
	assert.Equal(t, 4, running)
}

// Alone, a workspace whose slots are held long (H's calls of 14 s, never
// released here) takes every slot but the spare one (an eighth of 8): a
// workspace arriving after it gets that one at once instead of waiting out
// H's calls. The spare slot stays free for newcomers when H gives one back.
func TestSlotsKeepASpareSlotFromAWorkspaceOfLongCalls(t *testing.T) {
	clock := testkit.NewManualClock()
	s := newSlots(8, time.Second, nil, clock.Now)
	h, n := uuid.New(), uuid.New()
	held := started(s, h, "webhook/h", 7)
	backlog := acquireAsync(s, context.Background(), h, "webhook/h", "")
	queued(t, s, 1)
	running, _, _ := s.stats()
	assert.Equal(t, 7, running, "H, alone, leaves the spare slot")

	first := acquireAsync(s, context.Background(), n, "webhook/n", "")
	<-first.done
	require.NotNil(t, first.release, "N, arriving, gets the spare slot at once")

	clock.Advance(14 * time.Second)
	held[0].release(CallResult{}) // after 14 s: H's slots are held long
	running, _, _ = s.stats()
	assert.Equal(t, 7, running, "the slot H gave back is spare again, not H's")
	assert.False(t, backlog.ended())
	second := acquireAsync(s, context.Background(), n, "webhook/n", "")
	<-second.done
	require.NotNil(t, second.release)
}

// A workspace whose slots come back within the hold takes the spare ones
// too: alone with short calls it uses every slot.
func TestSlotsGiveTheSpareToAWorkspaceOfShortCalls(t *testing.T) {
	clock := testkit.NewManualClock()
	s := newSlots(8, time.Second, nil, clock.Now)
	ws := uuid.New()
	held := started(s, ws, "webhook/f", 7)
	clock.Advance(100 * time.Millisecond)
	held[0].release(CallResult{})
	for range 2 {
		w := acquireAsync(s, context.Background(), ws, "webhook/f", "")
		<-w.done
		require.NotNil(t, w.release)
	}
	running, _, _ := s.stats()
	assert.Equal(t, 8, running)
}
