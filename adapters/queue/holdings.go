package queue

import (
	"cmp"
	"slices"

	"github.com/google/uuid"
)

// holdings is the fair share of the slots by what each workspace holds:
// fairness in who starts next is not enough, since a workspace whose calls
// last 14 s keeps each slot it gets 140 times as long as one whose calls
// last 100 ms, and ends up holding nearly all of them. While other
// workspaces have work, a workspace holding its share (the slots divided
// by the workspaces with work, at least one) starts nothing more unless
// none of the others can start; alone it may hold every slot.
type holdings struct {
	size int
	held map[uuid.UUID]int // slots each workspace holds, without zeros
}

func newHoldings(size int) holdings { return holdings{size: size, held: map[uuid.UUID]int{}} }

func (h *holdings) take(ws uuid.UUID) { h.held[ws]++ }

func (h *holdings) give(ws uuid.UUID) {
	if h.held[ws]--; h.held[ws] <= 0 {
		delete(h.held, ws)
	}
}

// order is the order in which the workspaces with messages waiting
// (waiting) are offered the next free slot: those below their share
// first, then those at it (who get the slot only if no other can start
// a message); within each, the one served least recently (served: the
// number of the grant each last got) first.
func (h *holdings) order(waiting []uuid.UUID, served map[uuid.UUID]uint64) []uuid.UUID {
	withWork := len(h.held)
	for _, ws := range waiting {
		if h.held[ws] == 0 {
			withWork++
		}
	}
	share := max(1, h.size/max(1, withWork))
	full := func(ws uuid.UUID) int {
		if h.held[ws] >= share {
			return 1
		}
		return 0
	}
	order := slices.Clone(waiting)
	slices.SortFunc(order, func(a, b uuid.UUID) int {
		return cmp.Or(cmp.Compare(full(a), full(b)), cmp.Compare(served[a], served[b]))
	})
	return order
}
