package idempotency

import "github.com/oncehq/once/domain/model"

// TwinsOf is how many requests joined the running leader of scope in s.
func TwinsOf(s *Service, scope model.IdempotencyScope) int { return s.inFlight.twinsOf(scope) }
