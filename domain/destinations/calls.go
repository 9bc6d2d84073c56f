package destinations

import (
	"slices"
	"strings"
	"time"
)

// calls are a destination's calls in flight across the fleet, kept in its
// shared record so that its concurrency cap (Quota.Concurrency) counts
// every worker's calls, not one process's: three workers each holding a
// shop's cap of 10 would send it 30 at once, and a workspace of slow
// destinations would hold the cap once per worker.
//
// Each call is a lease: its name (the gate's id, a colon, a number the
// gate never gives twice) and its end (Config.CallLease from its start).
// A call writes its lease when it starts, in the same compare-and-set
// that takes its token or its probe, and removes it when it ends, in the
// same write that teaches its outcome: one write at each end of a call.
// A worker killed during calls never removes their leases, and once they
// are over nobody counts them. A worker counts its own calls from memory
// (destination.leases), not from the record: a lease whose removal could
// not be written is dropped by its gate's next write of the record.
type calls []callLease

type callLease struct {
	name  string
	until time.Time
}

// live is c without the leases over at now.
func (c calls) live(now time.Time) calls {
	return slices.DeleteFunc(slices.Clone(c), func(l callLease) bool { return !now.Before(l.until) })
}

// others counts the leases not taken by the gate of id.
func (c calls) others(id string) int {
	n := 0
	for _, l := range c {
		if !takenBy(l.name, id) {
			n++
		}
	}
	return n
}

// started is c with the lease name until until, without the leases of
// the gate of id that it no longer holds (mine: the names it holds), and
// with those it holds renewed until until: they are calls in flight, and
// a call longer than its lease (a slow transfer) keeps counting while
// its worker lives and writes the record.
func (c calls) started(name string, until time.Time, id string, mine map[string]struct{}) calls {
	c = slices.DeleteFunc(slices.Clone(c), func(l callLease) bool {
		_, held := mine[l.name]
		return takenBy(l.name, id) && !held
	})
	for i, l := range c {
		if takenBy(l.name, id) && l.until.Before(until) {
			c[i].until = until
		}
	}
	return append(c, callLease{name: name, until: until})
}

// ended is c without the lease name.
func (c calls) ended(name string) calls {
	if name == "" {
		return c
	}
	return slices.DeleteFunc(slices.Clone(c), func(l callLease) bool { return l.name == name })
}

// bound brings each lease's end to at most length ahead of now (see
// shared.bound); true if one moved.
func (c calls) bound(now time.Time, length time.Duration) bool {
	moved := false
	for i, l := range c {
		if until := atMost(l.until, now, length); !until.Equal(l.until) {
			c[i].until, moved = until, true
		}
	}
	return moved
}

// takenBy: the lease name is one the gate of id gave.
func takenBy(name, id string) bool { return strings.HasPrefix(name, id+":") }

// callWire is a lease as the record keeps it.
type callWire struct {
	Name  string    `json:"name"`
	Until time.Time `json:"until"`
}

func (c calls) wire() []callWire {
	if len(c) == 0 {
		return nil
	}
	out := make([]callWire, len(c))
	for i, l := range c {
		out[i] = callWire{Name: l.name, Until: l.until}
	}
	return out
}

func callsOf(w []callWire) calls {
	if len(w) == 0 {
		return nil
	}
	out := make(calls, len(w))
	for i, l := range w {
		out[i] = callLease{name: l.Name, until: l.Until}
	}
	return out
}
