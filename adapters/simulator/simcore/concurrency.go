package simcore

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Span is one call of a key, from its arrival to its answer.
type Span struct {
	// Seq numbers the calls in the order they arrived, over every key.
	Seq   int64     `json:"seq"`
	Token string    `json:"token,omitempty"`
	Start time.Time `json:"start"`
	// End is zero while the call is in flight.
	End time.Time `json:"end,omitzero"`
	// Status is how the call was answered (an HTTP status for simhttp).
	Status int `json:"status,omitempty"`
}

// Concurrency records the calls in flight per key (a shop, an ordering
// key): the most seen at once, and each call's span in arrival order, so
// a test can tell that the calls of one key never overlapped and ran in
// the order they were sent. The zero value is empty; it is safe for
// concurrent use.
type Concurrency struct {
	mu sync.Mutex
	// generation changes with Reset: a call that started before answers
	// into no record.
	generation int
	seq        int64
	inFlight   map[string]int
	most       map[string]int
	spans      map[string][]Span
}

// Start records a call of token arriving at now under every key, and
// returns the function that records its answer.
func (c *Concurrency) Start(keys []string, token string, now time.Time) (end func(now time.Time, status int)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight == nil {
		c.inFlight, c.most, c.spans = map[string]int{}, map[string]int{}, map[string][]Span{}
	}
	c.seq++
	seq, at := c.seq, make([]int, len(keys))
	for i, k := range keys {
		at[i] = len(c.spans[k])
		c.inFlight[k]++
		c.most[k] = max(c.most[k], c.inFlight[k])
		c.spans[k] = append(c.spans[k], Span{Seq: seq, Token: token, Start: now})
	}
	generation := c.generation
	return func(now time.Time, status int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if generation != c.generation {
			return
		}
		for i, k := range keys {
			c.inFlight[k]--
			span := &c.spans[k][at[i]]
			span.End, span.Status = now, status
		}
	}
}

// MaxInFlight returns the most calls seen in flight at once, per key.
func (c *Concurrency) MaxInFlight() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.most)
}

// Spans returns the calls of each of keys that had any, in arrival order.
func (c *Concurrency) Spans(keys ...string) map[string][]Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]Span, len(keys))
	for _, k := range keys {
		if s, ok := c.spans[k]; ok {
			out[k] = slices.Clone(s)
		}
	}
	return out
}

// Reset forgets every record; calls in flight are forgotten too.
func (c *Concurrency) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight, c.most, c.spans = nil, nil, nil
	c.generation++
}
