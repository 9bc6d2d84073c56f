package scheduling

import (
	"cmp"
	"iter"
	"time"

	"github.com/google/uuid"
)

// Holdings is the fair share of the slots by what each workspace holds:
// fairness in who starts next is not enough, since a workspace whose calls
// last 14 s keeps each slot it gets 140 times as long as one whose calls
// last 100 ms, and ends up holding nearly all of them. While other
// workspaces have work, a workspace holding its share (the slots divided
// by the workspaces with work, at least one) starts nothing more unless
// none of the others can start; alone it may hold every slot but the
// spare ones, unless its calls are short.
//
// The spare slots (an eighth) are for a workspace that comes while
// others' long calls hold the rest: no slot is taken back from a call, so
// a workspace whose backlog reached the worker first (its 256 calls of
// 14 s started in the same millisecond) would otherwise keep every slot
// until they end, and a workspace arriving a moment later would wait
// them out whatever its share. A spare slot goes only to a workspace
// holding less than its share as it would be with one more workspace, or
// whose slots lately came back within the worker's hold: those turn over
// soon enough to leave room.
//
// This is the share of one worker's slots. What a worker knows of the
// others is only what the fleet's destination records say (each
// destination's calls in flight, against its cap, across the fleet);
// it does not see which workspaces the other workers serve nor how many
// slots each holds there, so a workspace's share of the fleet is kept
// as each worker's share of its own slots, and the destinations' caps
// bound what its slow destinations hold across all of them.
type Holdings struct {
	size int
	held map[uuid.UUID]int // slots each workspace holds, without zeros
	// usual is, per workspace holding slots, how long it held its slots
	// lately (an average, an eighth per slot given back).
	usual map[uuid.UUID]time.Duration
	// ranked is Order's heap, its array kept from one slot freed to the
	// next: a pick allocates nothing for it.
	ranked []rankedWorkspace
}

func NewHoldings(size int) Holdings {
	return Holdings{size: size, held: map[uuid.UUID]int{}, usual: map[uuid.UUID]time.Duration{}}
}

func (h *Holdings) Take(ws uuid.UUID) { h.held[ws]++ }

// Untake takes back a slot ws was given but never used (its destination
// refused it): unlike Give, it teaches nothing of how long ws holds its
// slots.
func (h *Holdings) Untake(ws uuid.UUID) {
	if h.held[ws]--; h.held[ws] <= 0 {
		delete(h.held, ws)
		delete(h.usual, ws)
	}
}

// Give takes back a slot ws held for took.
func (h *Holdings) Give(ws uuid.UUID, took time.Duration) {
	if h.held[ws]--; h.held[ws] <= 0 {
		delete(h.held, ws)
		delete(h.usual, ws)
		return
	}
	took = max(took, 0)
	if u, ok := h.usual[ws]; ok {
		took = u + (took-u)/8
	}
	h.usual[ws] = took
}

// Spare is how many of the slots only some workspaces may take (see
// Holdings): none of fewer than 8.
func (h *Holdings) Spare() int { return h.size / 8 }

// MayTakeSpare: ws, a workspace with messages waiting (waiting: all of
// them), may take one of the spare slots; short is the longest a slot may
// be held to count as turning over soon.
func (h *Holdings) MayTakeSpare(ws uuid.UUID, waiting []uuid.UUID, short time.Duration) bool {
	if u, ok := h.usual[ws]; ok && u < short {
		return true
	}
	return h.held[ws] < h.size/(h.withWork(waiting)+1)
}

// withWork counts the workspaces holding slots or waiting for one.
func (h *Holdings) withWork(waiting []uuid.UUID) int {
	n := len(h.held)
	for _, ws := range waiting {
		if h.held[ws] == 0 {
			n++
		}
	}
	return n
}

// Order is the order in which the workspaces with messages waiting
// (waiting) are offered the next free slot: those below their share
// first, then those at it (who get the slot only if no other can start
// a message); within each, the one served least recently (served: the
// number of the grant each last got) first, and of those never served
// the first to wait first. The order is made as it is read (a heap):
// the first is found in one pass over the workspaces, and each next one
// in a few steps, so a slot handed to the first costs no sort of
// thousands. It is read once, before the next call.
func (h *Holdings) Order(waiting []uuid.UUID, served map[uuid.UUID]uint64) iter.Seq[uuid.UUID] {
	share := max(1, h.size/max(1, h.withWork(waiting)))
	ranked := h.ranked[:0]
	for i, ws := range waiting {
		r := rankedWorkspace{ws: ws, served: served[ws], at: i}
		if h.held[ws] >= share {
			r.full = 1
		}
		ranked = append(ranked, r)
	}
	h.ranked = ranked
	for i := len(ranked)/2 - 1; i >= 0; i-- {
		siftDown(ranked, i)
	}
	return func(yield func(uuid.UUID) bool) {
		for n := len(ranked); n > 0; n-- {
			first := ranked[0]
			ranked[0] = ranked[n-1]
			siftDown(ranked[:n-1], 0)
			if !yield(first.ws) {
				return
			}
		}
	}
}

// rankedWorkspace is a workspace's place in Order: at its share or not,
// when it was last served, and where it waits.
type rankedWorkspace struct {
	ws     uuid.UUID
	full   int
	served uint64
	at     int // its place among the workspaces waiting
}

func (a rankedWorkspace) before(b rankedWorkspace) bool {
	return cmp.Or(cmp.Compare(a.full, b.full), cmp.Compare(a.served, b.served), cmp.Compare(a.at, b.at)) < 0
}

// siftDown moves h[i] down the min-heap h to its place.
func siftDown(h []rankedWorkspace, i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].before(h[least]) {
			least = l
		}
		if r < len(h) && h[r].before(h[least]) {
			least = r
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}
