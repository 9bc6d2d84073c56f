package idempotency

import "github.com/oncehq/once/domain/model"

// TwinsOf is how many requests joined the running leader of scope in s.
func TwinsOf(s *Service, scope model.IdempotencyScope) int { return s.inFlight.twinsOf(scope) }

// ConfirmWaiters is how many cache hits of s wait for a confirmation of
// the store's epoch that has not begun yet.
func ConfirmWaiters(s *Service) int { return s.confirms.waiting() }
