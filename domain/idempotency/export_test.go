package idempotency

import "github.com/oncehq/once/domain/model"

// TwinsOf is how many requests joined the running leader of scope in s.
func TwinsOf(s *Service, scope model.IdempotencyScope) int { return s.inFlight.twinsOf(scope) }

// ConfirmWaiters is how many cache hits of s wait for a confirmation of
// the store's epoch that has not begun yet.
func ConfirmWaiters(s *Service) int { return s.confirms.waiting() }

// waiting is how many hits wait for a round that has not begun.
func (c *confirmations) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		return 0
	}
	return c.next.waiters
}

// twinsOf is how many requests joined the running leader of scope (tests synchronise on it).
func (r *inFlight) twinsOf(scope model.IdempotencyScope) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.scopes[scope]; ok {
		return f.twins
	}
	return 0
}
