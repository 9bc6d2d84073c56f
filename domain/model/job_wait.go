package model

// JobWaitKind is why a worker parked a job until later: a closed set,
// kept in its event's wait_kind column (sql/022_job_waits.sql checks it),
// so that what reads a parked job's state reads a column, never the text
// written for people beside it.
type JobWaitKind string

const (
	// JobWaitOutage: its destination, or the destination's platform, is
	// down (its breaker open, or the probe of a half-open one out). A
	// call to it that is answered wakes these (ports.JobWaits.Wake).
	JobWaitOutage JobWaitKind = "outage"
	// JobWaitPaced: the destination's pace is spent for now.
	JobWaitPaced JobWaitKind = "paced"
	// JobWaitBusy: the destination has its cap of calls in flight.
	JobWaitBusy JobWaitKind = "busy"
	// JobWaitPaused: an operator paused the destination.
	JobWaitPaused JobWaitKind = "paused"
	// JobWaitStateUnavailable: the fleet's state of the destination could
	// not be read, so no call was let through.
	JobWaitStateUnavailable JobWaitKind = "state_unavailable"
	// JobWaitThrottled: the destination answered 429.
	JobWaitThrottled JobWaitKind = "throttled"
	// JobWaitOrdering: an earlier job of its ordering key is parked, and
	// it waits behind it.
	JobWaitOrdering JobWaitKind = "ordering"
	// JobWaitRetry: its run failed in a way worth trying again (a
	// destination's 5xx or timeout, a dependency of ours unavailable, or
	// a failure of its own that spent an attempt).
	JobWaitRetry JobWaitKind = "retry"
)

// JobWaitKinds lists every kind, as sql/022_job_waits.sql's CHECK does.
var JobWaitKinds = []JobWaitKind{JobWaitOutage, JobWaitPaced, JobWaitBusy, JobWaitPaused,
	JobWaitStateUnavailable, JobWaitThrottled, JobWaitOrdering, JobWaitRetry}

// Valid reports whether k is one of JobWaitKinds.
func (k JobWaitKind) Valid() bool {
	for _, known := range JobWaitKinds {
		if k == known {
			return true
		}
	}
	return false
}

// AfterAnOutage reports whether a job parked for k waited for its
// destination to come back (its breaker open, or a failed run's retry),
// so that, reaching it now, it tells its workspace's jobs asleep for the
// destination that it is back. A pace, a cap, a pause, a 429 or its key's
// line say nothing of an outage's end.
func (k JobWaitKind) AfterAnOutage() bool { return k == JobWaitOutage || k == JobWaitRetry }

// TakesATurn reports whether a job parked for k only waits its turn:
// its destination's pace or cap, an operator's pause, an earlier job of
// its key. Such a wait is no failure, so no deadline ends it (a backlog
// paced longer than the deadline waits); an outage, a 429 or a failed run
// are waited out until the job's deadline, no longer.
func (k JobWaitKind) TakesATurn() bool {
	return k == JobWaitPaced || k == JobWaitBusy || k == JobWaitPaused || k == JobWaitOrdering
}

// JobWait is the state of a job a worker parks: why (Kind), what for (For,
// the destination it waits for: its own, or its platform whose breaker
// holds all of the platform's accounts; empty when the wait is no
// destination's) and Reason, the same for people, which becomes the
// event's last error and is only ever shown, never read back.
type JobWait struct {
	Kind   JobWaitKind
	For    string
	Reason string
}
