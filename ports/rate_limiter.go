package ports

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// RateLimiter meters the requests each workspace executes, against a
// store every process of the deployment shares (Redis), or this process
// alone (the embedded configuration).
type RateLimiter interface {
	// Take spends one request of workspace's allowance under rate, if one
	// is left: Allowed true, and Remaining what is left after it; or
	// Allowed false, nothing spent, and RetryAfter until one is left.
	// rate is never unlimited. An error means the store could not be
	// asked (unreachable, timed out): the caller decides what that means.
	Take(ctx context.Context, workspace uuid.UUID, rate model.Rate) (model.RateDecision, error)
}
