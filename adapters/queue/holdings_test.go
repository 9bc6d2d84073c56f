package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Workspace H's calls never end (a receiver that answers after 14 s,
// held here until released) while workspace N's end at once: once H has
// given up one slot, N keeps it for job after job, since H holds more
// than its half of the slots; H gets a slot again only when it holds
// less than its share.
func TestSlotsHoldAWorkspaceToItsShareWhileOthersWait(t *testing.T) {
	s := newSlots(4, time.Second, nil, nil)
	h, n := uuid.New(), uuid.New()
	var held []*waiter
	for range 4 { // alone, H may take every slot
		w := acquireAsync(s, context.Background(), h, "webhook/h", "")
		<-w.done
		held = append(held, w)
	}
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
