package limits

// Tracked is how many workspaces g holds state for (for tests: an idle
// gate holds none).
func Tracked(g *Gate) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.workspaces)
}
