package queue

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

// Tickets set aside for their destination come back into their
// workspace's line in their place by arrival, and a workspace with only
// tickets set aside still waits (its turn is kept).
func TestWorkspaceLinesPutTicketsBackInArrivalOrder(t *testing.T) {
	l := newWorkspaceLines()
	ws := uuid.New()
	var tickets []*ticket
	for i, d := range []string{"a", "b", "a", "c", "a"} {
		tk := &ticket{workspace: ws, destination: d, seq: uint64(i + 1)}
		tickets = append(tickets, tk)
		l.enqueue(tk)
	}
	for _, tk := range tickets {
		if tk.destination == "a" {
			l.setAside(tk, tk.destination)
		}
	}
	assert.Equal(t, 3, l.heldCount(tickets[0]))
	assert.Equal(t, []uint64{2, 4}, seqs(l, ws))
	l.remove(tickets[1])
	l.remove(tickets[3])
	assert.Equal(t, []uuid.UUID{ws}, l.turns, "its tickets set aside still wait")
	assert.Equal(t, 3, l.waiting)

	l.enqueue(&ticket{workspace: ws, destination: "d", seq: 6})
	later := &ticket{workspace: ws, destination: "a", seq: 7}
	l.enqueue(later)
	assert.Equal(t, 3, l.heldCount(later), "a later ticket counts those held before it")
	l.putBack("a")
	assert.Equal(t, []uint64{1, 3, 5, 6, 7}, seqs(l, ws))
	assert.Zero(t, l.heldCount(later))
}

func seqs(l workspaceLines, ws uuid.UUID) []uint64 {
	var out []uint64
	for t := l.queues[ws].front; t != nil; t = t.next {
		out = append(out, t.seq)
	}
	return out
}
