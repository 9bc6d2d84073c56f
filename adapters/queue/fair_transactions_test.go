package queue

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/ports"
)

// heldTransactions runs each transaction until the test lets it end, and
// records the workspaces in the order their transactions began.
type heldTransactions struct {
	mu      sync.Mutex
	began   []uuid.UUID
	running int
	peak    int
	end     chan struct{}
}

func (h *heldTransactions) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	h.mu.Lock()
	h.began = append(h.began, ws)
	h.running++
	h.peak = max(h.peak, h.running)
	h.mu.Unlock()
	<-h.end
	h.mu.Lock()
	h.running--
	h.mu.Unlock()
	return nil
}

func (h *heldTransactions) snapshot() ([]uuid.UUID, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]uuid.UUID(nil), h.began...), h.peak
}

// Two transactions at most; A's twenty asked first, then B's one: B's
// begins as soon as one ends, before A's third.
func TestFairTransactionsLetAnotherWorkspacePassABacklog(t *testing.T) {
	held := &heldTransactions{end: make(chan struct{})}
	uow := FairTransactions(held, 2)
	a, b := uuid.New(), uuid.New()
	var wg sync.WaitGroup
	run := func(ws uuid.UUID) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, uow.Transact(context.Background(), ws, func(context.Context, ports.Tx) error { return nil }))
		}()
	}
	for range 20 {
		run(a)
	}
	require.Eventually(t, func() bool { began, _ := held.snapshot(); return len(began) == 2 }, 10*time.Second, time.Millisecond)
	run(b)
	turns := uow.(*fairTransactions).turns
	require.Eventually(t, func() bool { _, _, waiting := turns.stats(); return waiting == 19 }, 10*time.Second, time.Millisecond)
	held.end <- struct{}{} // one of A's ends: its turn is B's
	require.Eventually(t, func() bool { began, _ := held.snapshot(); return len(began) == 3 }, 10*time.Second, time.Millisecond)
	began, _ := held.snapshot()
	assert.Equal(t, b, began[2], "the first turn freed goes to the workspace that had none")
	close(held.end)
	wg.Wait()
	_, peak := held.snapshot()
	assert.LessOrEqual(t, peak, 2, "never more transactions at once than allowed")
}
