package simcore

import "sync"

// Tally counts what a simulated system did, per key (a request token, a
// URL) and in all. The zero value is empty; it is safe for concurrent use.
type Tally struct {
	mu    sync.Mutex
	per   map[string]int
	total int
}

// Add counts one for key.
func (t *Tally) Add(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.per == nil {
		t.per = map[string]int{}
	}
	t.per[key]++
	t.total++
}

// Of returns the count of key.
func (t *Tally) Of(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.per[key]
}

// Total returns the count of every key.
func (t *Tally) Total() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}
