package memory

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// RateLimiter implements ports.RateLimiter in this process, for the
// embedded configuration (one process, nothing to share). It is the
// generic cell rate algorithm that the Redis limiter runs as a script, so
// both configurations answer alike: per workspace it keeps one time, the
// theoretical arrival time (tat) of the next request were they spaced
// evenly; a request is allowed while that lies less than Burst intervals
// ahead of now, and moves it one interval on.
type RateLimiter struct {
	clock ports.Clock
	mu    sync.Mutex
	tat   map[uuid.UUID]time.Time
	takes int
}

var _ ports.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter returns an empty limiter on clock.
func NewRateLimiter(clock ports.Clock) *RateLimiter {
	return &RateLimiter{clock: clock, tat: map[uuid.UUID]time.Time{}}
}

// sweepEvery is how many takes pass between two sweeps of the workspaces
// whose allowance is full again (their tat is past), which the map then
// forgets: it stays as large as the workspaces active lately.
const sweepEvery = 4096

// Take implements ports.RateLimiter; it never fails.
func (l *RateLimiter) Take(_ context.Context, workspace uuid.UUID, rate model.Rate) (model.RateDecision, error) {
	now := l.clock.Now()
	interval := rate.Interval()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	tat := l.tat[workspace]
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	allowAt := next.Add(-interval * time.Duration(rate.Burst))
	if now.Before(allowAt) {
		return model.RateDecision{RetryAfter: allowAt.Sub(now)}, nil
	}
	l.tat[workspace] = next
	return model.RateDecision{Allowed: true, Remaining: int(now.Sub(allowAt) / interval)}, nil
}

func (l *RateLimiter) sweep(now time.Time) {
	l.takes++
	if l.takes%sweepEvery != 0 {
		return
	}
	for ws, tat := range l.tat {
		if !tat.After(now) {
			delete(l.tat, ws)
		}
	}
}
