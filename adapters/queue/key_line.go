package queue

import (
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// keyLine is an ordering key whose line was parked: its later arrivals
// are parked behind it, until then.
type keyLine struct {
	until time.Time
	// asleep, if the line sleeps through its destination's outage, is
	// its fellow sleepers.
	asleep *sleepers
}

// behindAnEarlierJob is the wait of a later arrival behind a parked line.
var behindAnEarlierJob = model.JobWait{Kind: model.JobWaitOrdering, Reason: "waiting behind an earlier job of its ordering key"}

// behind is the wait of a later arrival of the key, of workspace (under
// the slots' mu): behind the line, and, if the line sleeps through an
// outage, with it, so the wake that brings the line back brings it back
// too (with a wait of its own it would match no wake, and sleep the full
// outage wait).
func (kl keyLine) behind(workspace uuid.UUID) *waitFor {
	if z := kl.asleep; z != nil && !z.woken.Load() {
		z.workspaces[workspace]++ // its workspace's Wake brings it back
		return &waitFor{until: kl.until, wait: z.wait, asleep: z}
	}
	return &waitFor{until: kl.until, wait: behindAnEarlierJob}
}
