package queue

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/google/uuid"
)

// workspaceLines are the tickets waiting for a slot, a line per
// workspace in arrival order, and when each workspace last got a slot:
// what the fair share (holdings) orders the workspaces by. A ticket
// waiting in memory for a destination that refused it is set aside, in
// that destination's line (setAside), until the refusal ends (putBack): a
// pick walks only the tickets that may start, whatever the thousands
// waiting for their destinations. It keeps no policy of its own.
type workspaceLines struct {
	queues map[uuid.UUID]*ticketLine // each workspace's tickets that may ask their destination, in arrival order
	// held are, per destination refused (or platform pacing all of its
	// shops: platformPace), the tickets waiting in memory for it, each
	// workspace's in arrival order, and bound how many of each
	// workspace's wait, and how many of those are held, by the
	// destination they are bound for.
	held    map[string]*ticketLine
	bound   map[heldKey]*boundFor
	turns   []uuid.UUID // workspaces with tickets waiting
	count   map[uuid.UUID]int
	served  map[uuid.UUID]uint64 // when each workspace last got a slot (grants counts them)
	grants  uint64
	waiting int
	// returning is putBack's buffer, kept between calls.
	returning []*ticket
	// spare are emptied lines kept for the next to need one: a workspace
	// whose line empties with each job started would make one per job.
	spare []*ticketLine
}

// maxSpareLines bounds the emptied lines kept.
const maxSpareLines = 64

// heldKey is a workspace's tickets bound for a destination.
type heldKey struct {
	workspace   uuid.UUID
	destination string
}

// boundFor counts a workspace's tickets bound for a destination: those
// waiting, and those of them held. Each ticket points to its own count
// (ticket.bound) from enqueue to remove, so setting it aside and putting
// it back, which a platform's pace does to every waiting ticket at each
// token, counts without a lookup.
type boundFor struct{ waiting, held int }

func newWorkspaceLines() workspaceLines {
	return workspaceLines{
		queues: map[uuid.UUID]*ticketLine{}, held: map[string]*ticketLine{}, bound: map[heldKey]*boundFor{},
		count: map[uuid.UUID]int{}, served: map[uuid.UUID]uint64{},
	}
}

// enqueue puts t at the end of its workspace's line.
func (l *workspaceLines) enqueue(t *ticket) {
	if l.count[t.workspace] == 0 {
		l.turns = append(l.turns, t.workspace)
	}
	l.count[t.workspace]++
	k := heldKey{t.workspace, t.destination}
	if t.bound = l.bound[k]; t.bound == nil {
		t.bound = &boundFor{}
		l.bound[k] = t.bound
	}
	t.bound.waiting++
	l.queue(t.workspace).pushBack(t)
	l.waiting++
}

// queue is ws's line, made if new.
func (l *workspaceLines) queue(ws uuid.UUID) *ticketLine {
	q := l.queues[ws]
	if q == nil {
		q = l.newLine()
		l.queues[ws] = q
	}
	return q
}

// newLine is an empty line, a spare one if kept.
func (l *workspaceLines) newLine() *ticketLine {
	if n := len(l.spare); n > 0 {
		q := l.spare[n-1]
		l.spare = l.spare[:n-1]
		return q
	}
	return &ticketLine{}
}

// spareLine keeps q, emptied, for the next line to need one (a few).
func (l *workspaceLines) spareLine(q *ticketLine) {
	if len(l.spare) < maxSpareLines {
		l.spare = append(l.spare, q)
	}
}

// remove takes t out of the lines, its workspace's or its destination's.
func (l *workspaceLines) remove(t *ticket) {
	l.out(t)
	t.heldFor = ""
	if t.bound.waiting--; t.bound.waiting == 0 {
		delete(l.bound, heldKey{t.workspace, t.destination})
	}
	t.bound = nil
	if l.count[t.workspace]--; l.count[t.workspace] == 0 {
		delete(l.count, t.workspace)
		if i := slices.Index(l.turns, t.workspace); i >= 0 {
			l.turns = slices.Delete(l.turns, i, i+1)
		}
		l.forgetServed()
	}
	l.waiting--
}

// out unlinks t from the list it is in, which it leaves if empty.
func (l *workspaceLines) out(t *ticket) {
	if t.heldFor == "" {
		q := t.in
		q.remove(t)
		if q.len() == 0 {
			delete(l.queues, t.workspace)
			l.spareLine(q)
		}
		return
	}
	h := t.in
	h.remove(t)
	if h.len() == 0 {
		delete(l.held, t.heldFor)
		l.spareLine(h)
	}
	l.unheld(t)
}

// unheld counts t no more among its destination's tickets held.
func (l *workspaceLines) unheld(t *ticket) { t.bound.held-- }

// heldCount is how many of t's workspace's tickets bound for its
// destination are held, for it or for its platform (t waiting).
func (l *workspaceLines) heldCount(t *ticket) int { return t.bound.held }

// setAside sets t, in its workspace's line, aside for hold: its
// destination, or its platform's pace (platformPace).
func (l *workspaceLines) setAside(t *ticket, hold string) {
	l.out(t)
	h := l.held[hold]
	if h == nil {
		h = l.newLine()
		l.held[hold] = h
	}
	t.heldFor = hold
	h.pushBack(t)
	t.bound.held++
}

// putBack puts the tickets held for destinations (or platforms' paces) back in their
// workspaces' lines, each in its place by arrival. Many destinations'
// refusals end at once (a platform's pace refuses all of its shops
// until its next token): their tickets go back in one walk of each
// line, in arrival order, instead of a walk from its front per ticket.
func (l *workspaceLines) putBack(destinations ...string) {
	back := l.returning[:0]
	for _, d := range destinations {
		h := l.held[d]
		if h == nil {
			continue
		}
		delete(l.held, d)
		for t := h.front; t != nil; t = h.front {
			h.remove(t)
			l.unheld(t)
			t.heldFor = ""
			back = append(back, t)
		}
		l.spareLine(h)
	}
	if len(back) > 1 {
		slices.SortFunc(back, func(a, b *ticket) int {
			return cmp.Or(bytes.Compare(a.workspace[:], b.workspace[:]), cmp.Compare(a.seq, b.seq))
		})
	}
	// at is where the walk of the workspace's line stopped: the tickets
	// before it arrived before the last one put back, so before the next
	// (nil: the line's end).
	var at *ticket
	for i, t := range back {
		q := l.queue(t.workspace)
		if i == 0 || t.workspace != back[i-1].workspace {
			at = q.front
		}
		for at != nil && at.seq < t.seq {
			at = at.next
		}
		q.insertBefore(t, at)
	}
	clear(back)
	l.returning = back[:0]
}

// first is any waiting ticket (nil: none).
func (l *workspaceLines) first() *ticket {
	for _, q := range l.queues {
		return q.front
	}
	for _, h := range l.held {
		return h.front
	}
	return nil
}

// granted notes that ws got a slot now: its turn was, and is.
func (l *workspaceLines) granted(ws uuid.UUID) (was, is uint64) {
	was = l.served[ws]
	l.grants++
	l.served[ws] = l.grants
	return was, l.grants
}

// ungranted takes back granted's was → is, unless ws was served since
// (then it says so: not ok).
func (l *workspaceLines) ungranted(ws uuid.UUID, was, is uint64) (ok bool) {
	switch {
	case l.served[ws] != is:
		return false
	case was == 0:
		delete(l.served, ws)
	default:
		l.served[ws] = was
	}
	return true
}

// forgetServed bounds served: once it holds many workspaces that wait for
// nothing, it forgets them. A workspace forgotten counts as served long
// ago, which only matters if it comes back at once.
func (l *workspaceLines) forgetServed() {
	if len(l.served) <= 4*len(l.turns)+1024 {
		return
	}
	for ws := range l.served {
		if l.count[ws] == 0 {
			delete(l.served, ws)
		}
	}
}
