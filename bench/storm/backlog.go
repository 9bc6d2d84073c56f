package storm

import (
	"context"
	"database/sql"
	"time"
)

// backlogState reads, as the superuser of the scenario's database, where the
// work stands: outbox events by status and the highest attempt count, and
// how many operations ended (succeeded or failed: their job ran). The
// outage and restart scenarios create stores, one outbox event and one
// operation each.
const backlogState = `
SELECT (SELECT count(*) FROM outbox_events),
       (SELECT count(*) FROM outbox_events WHERE status IN ('pending', 'dispatching')),
       (SELECT count(*) FROM outbox_events WHERE status = 'dispatched'),
       (SELECT count(*) FROM outbox_events WHERE status = 'dead_letter'),
       (SELECT coalesce(max(attempt_count), 0) FROM outbox_events),
       (SELECT count(*) FROM operations WHERE status IN ('succeeded', 'failed'))`

// backlog is where the work of a scenario stands.
type backlog struct {
	Events      int // outbox events committed
	Waiting     int // pending or dispatching: not yet on the broker
	Dispatched  int
	DeadLetters int
	MaxAttempts int // the highest attempt_count of any event
	Delivered   int // jobs that ran: operations that ended
}

// Lost is the work that is neither done, nor dead-lettered, nor waiting in
// the outbox: events the Dispatcher marked dispatched whose job never ran.
func (b backlog) Lost() int { return b.Events - b.Delivered - b.DeadLetters - b.Waiting }

// drained: every event's job ran or the event is dead-lettered.
func (b backlog) drained() bool { return b.Waiting == 0 && b.Delivered+b.DeadLetters == b.Events }

func readBacklog(ctx context.Context, super *sql.DB) (backlog, error) {
	var b backlog
	err := super.QueryRowContext(ctx, backlogState).Scan(
		&b.Events, &b.Waiting, &b.Dispatched, &b.DeadLetters, &b.MaxAttempts, &b.Delivered)
	return b, err
}

// waitDrained polls the backlog until it is drained or deadline passes, and
// returns the last state read. progress is called now and then.
func waitDrained(ctx context.Context, super *sql.DB, deadline time.Time, progress func(backlog)) (backlog, bool, error) {
	var last backlog
	report := time.Now()
	for {
		b, err := readBacklog(ctx, super)
		if err == nil {
			last = b
			if b.drained() {
				return b, true, nil
			}
		}
		if time.Since(report) > progressEvery {
			progress(last)
			report = time.Now()
		}
		if time.Now().After(deadline) {
			return last, false, err
		}
		select {
		case <-ctx.Done():
			return last, false, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
