package scheduling

import (
	"container/heap"
	"time"
)

// Refusals are the destinations' Refusals as the gate last answered
// them, until they end: a message for a destination refused is not
// asked about again before then. They end in the order of a heap, so
// finding those over costs nothing per destination still refused.
type Refusals struct {
	by   map[string]Refusal
	ends refusalEnds
}

func NewRefusals() Refusals { return Refusals{by: map[string]Refusal{}} }

// Of is destination's refusal, if it refuses at now.
func (rs *Refusals) Of(destination string, now time.Time) (Refusal, bool) {
	r, ok := rs.by[destination]
	if !ok || !r.Until.After(now) {
		return Refusal{}, false
	}
	return r, true
}

// Remember keeps destination's refusal r, ending in the future at the
// latest a millisecond from now (or nothing wakes the line), as kept.
func (rs *Refusals) Remember(destination string, r Refusal, now time.Time) Refusal {
	if !r.Until.After(now) {
		r.Until = now.Add(time.Millisecond)
	}
	rs.by[destination] = r
	heap.Push(&rs.ends, refusalEnd{destination: destination, until: r.Until})
	return r
}

// Forget drops destination's refusal: it granted a call, or one of its
// calls ended and it may take another. Whether it had one is returned.
func (rs *Refusals) Forget(destination string) bool {
	_, ok := rs.by[destination]
	delete(rs.by, destination)
	return ok
}

// Expire forgets the Refusals over at now and says when the soonest of
// the others ends (zero: none); ended hears each destination forgotten.
func (rs *Refusals) Expire(now time.Time, ended func(destination string)) (soonest time.Time) {
	for len(rs.ends) > 0 {
		top := rs.ends[0]
		r, ok := rs.by[top.destination]
		if ok && r.Until.Equal(top.until) && top.until.After(now) {
			return top.until
		}
		heap.Pop(&rs.ends)
		if ok && r.Until.Equal(top.until) {
			delete(rs.by, top.destination)
			ended(top.destination)
		}
	}
	return time.Time{}
}

// refusalEnd is when a refusal remembered ends; the heap keeps those of
// Refusals forgotten since (stale) until they come up.
type refusalEnd struct {
	destination string
	until       time.Time
}

type refusalEnds []refusalEnd

func (h refusalEnds) Len() int           { return len(h) }
func (h refusalEnds) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h refusalEnds) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refusalEnds) Push(x any)        { *h = append(*h, x.(refusalEnd)) }
func (h *refusalEnds) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
