package limits

// Tracked is how many workspaces g holds state for (for tests: an idle
// admission holds none).
func Tracked(g *Admission) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.workspaces)
}
