package storm

import (
	"context"
	"time"
)

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// sleepReporting waits d, calling report every progressEvery.
func sleepReporting(ctx context.Context, d time.Duration, report func()) error {
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		if err := sleep(ctx, min(left, progressEvery)); err != nil {
			return err
		}
		if time.Until(end) > 0 {
			report()
		}
	}
}
