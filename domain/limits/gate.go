package limits

import (
	"sync"

	"github.com/google/uuid"
)

// Gate counts the units of work each workspace has in flight in this
// process and refuses one over the cap. It never blocks: a refusal is
// immediate, so nobody waits on another workspace, or on its own.
type Gate struct {
	max int
	mu  sync.Mutex
	// inFlight holds only workspaces with work in flight, so it is as large
	// as the work this process does right now, not as the workspaces ever
	// seen.
	inFlight map[uuid.UUID]int
}

// NewGate caps each workspace at max units of work at once; max < 1 is
// no cap.
func NewGate(max int) *Gate {
	return &Gate{max: max, inFlight: map[uuid.UUID]int{}}
}

// Max is the cap (< 1: none).
func (g *Gate) Max() int { return g.max }

// TryEnter takes one of workspace's slots, or reports false when it has
// max in flight. Each true must be matched by one leave.
func (g *Gate) TryEnter(workspace uuid.UUID) bool {
	if g.max < 1 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inFlight[workspace] >= g.max {
		return false
	}
	g.inFlight[workspace]++
	return true
}

// Leave gives back a slot TryEnter took.
func (g *Gate) Leave(workspace uuid.UUID) {
	if g.max < 1 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inFlight[workspace] <= 1 {
		delete(g.inFlight, workspace)
		return
	}
	g.inFlight[workspace]--
}

// InFlight is how many units of work workspace has in flight (for tests:
// they synchronise on it).
func (g *Gate) InFlight(workspace uuid.UUID) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight[workspace]
}
