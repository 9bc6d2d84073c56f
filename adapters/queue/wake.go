package queue

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// wakeTimeout bounds the wake of one workspace's parked jobs.
const wakeTimeout = 30 * time.Second

// wakeWithin is how long the jobs woken after an outage take to come
// back, at most: spread, so the backlog leaves the worker to the other
// destinations' jobs too instead of coming all at once ahead of them.
const wakeWithin = 30 * time.Second

// wakeParked brings forward, in the outbox, the jobs parked long for a
// destination that answers again (slots.answered), workspace after
// workspace. Each workspace's Wake spreads what it moves over wakeWithin
// from now, at most maxEvery apart: the outbox counts every worker's
// parked jobs, where this worker knows only its own (workspaces' counts,
// about a third of a three-worker fleet's), so a fleet's wake ends within
// wakeWithin. The workspaces' spreads run side by side: together they
// come back at the rate of one spread of all. A Wake that fails is tried
// again (retry); if it keeps failing they come back at their time all
// the same.
func wakeParked(waits ports.JobWaits, maxEvery time.Duration, log *slog.Logger, retry wakeRetries) func(destination string, workspaces map[uuid.UUID]int) {
	return func(destination string, workspaces map[uuid.UUID]int) {
		woken := 0
		for ws := range workspaces {
			n, err := retry.do(func() (int, error) {
				ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
				defer cancel()
				return waits.Wake(ctx, ws, model.JobWaitOutage, destination, wakeWithin, maxEvery)
			})
			woken += n
			if err != nil {
				log.Warn("waking the jobs parked for a destination that is back failed: they come back at their time",
					"destination", destination, "workspace", ws, "error", domain.SanitizeError(err))
			}
		}
		log.Info("destination answers again: its parked jobs are due now", "destination", destination,
			"workspaces", len(workspaces), "jobs", woken, "within", wakeWithin)
	}
}

// wakeRetries is how a Wake that failed is tried again: a serialization
// failure after a cancel moved a row, a deadlock between two Wakes or a
// blip of the database would otherwise leave the jobs asleep for the
// full outage wait. At most tries in all, the wait between two doubling
// from initial, ±half.
type wakeRetries struct {
	tries   int
	initial time.Duration
	// sleep waits d (nil: a timer).
	sleep func(context.Context, time.Duration)
}

// defaultWakeRetries try a Wake over about 3.5 s.
var defaultWakeRetries = wakeRetries{tries: 4, initial: 500 * time.Millisecond}

// do runs wake until it succeeds or its tries are spent.
func (r wakeRetries) do(wake func() (int, error)) (int, error) {
	wait := r.initial
	for try := 1; ; try++ {
		n, err := wake()
		if err == nil || try >= r.tries {
			return n, err
		}
		d := wait/2 + rand.N(wait)
		if r.sleep != nil {
			r.sleep(context.Background(), d)
		} else {
			time.Sleep(d)
		}
		wait *= 2
	}
}
