package storm

import (
	"context"
	"time"
)

// onEveryTick calls fn every interval until ctx ends or fn says to stop.
func onEveryTick(ctx context.Context, every time.Duration, fn func() (goOn bool)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !fn() {
			return
		}
	}
}
