package queue

import (
	"container/list"
	"slices"

	"github.com/google/uuid"
)

// workspaceLines are the tickets waiting for a slot, a line per
// workspace in arrival order, and when each workspace last got a slot:
// what the fair share (holdings) orders the workspaces by. It keeps no
// policy of its own.
type workspaceLines struct {
	queues  map[uuid.UUID]*list.List // each workspace's waiting tickets, in arrival order
	turns   []uuid.UUID              // workspaces with tickets waiting
	served  map[uuid.UUID]uint64     // when each workspace last got a slot (grants counts them)
	grants  uint64
	waiting int
}

func newWorkspaceLines() workspaceLines {
	return workspaceLines{queues: map[uuid.UUID]*list.List{}, served: map[uuid.UUID]uint64{}}
}

// enqueue puts t at the end of its workspace's line.
func (l *workspaceLines) enqueue(t *ticket) {
	q := l.queues[t.workspace]
	if q == nil {
		q = list.New()
		l.queues[t.workspace] = q
		l.turns = append(l.turns, t.workspace)
	}
	t.inQueue = q.PushBack(t)
	l.waiting++
}

// remove takes t out of its workspace's line.
func (l *workspaceLines) remove(t *ticket) {
	q := l.queues[t.workspace]
	q.Remove(t.inQueue)
	t.inQueue = nil
	if q.Len() == 0 {
		delete(l.queues, t.workspace)
		if i := slices.Index(l.turns, t.workspace); i >= 0 {
			l.turns = slices.Delete(l.turns, i, i+1)
		}
		l.forgetServed()
	}
	l.waiting--
}

// granted notes that ws got a slot now.
func (l *workspaceLines) granted(ws uuid.UUID) {
	l.grants++
	l.served[ws] = l.grants
}

// forgetServed bounds served: once it holds many workspaces that wait for
// nothing, it forgets them. A workspace forgotten counts as served long
// ago, which only matters if it comes back at once.
func (l *workspaceLines) forgetServed() {
	if len(l.served) <= 4*len(l.turns)+1024 {
		return
	}
	for ws := range l.served {
		if l.queues[ws] == nil {
			delete(l.served, ws)
		}
	}
}
