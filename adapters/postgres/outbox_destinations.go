package postgres

import (
	"context"
	"time"

	"github.com/oncehq/once/ports"
)

// selectUndeliveredByDestination counts a workspace's events that are not
// dispatched, per destination with a prefix. The status list keeps the
// read in the live and dead partitions (sql/009): the dispatched history
// is never read. The inner LIMIT bounds the rows read whatever the
// backlog, so an operator's view costs the same when a receiver has been
// down for days; the port says the counts are then lower bounds.
const selectUndeliveredByDestination = `
SELECT destination,
       count(*) FILTER (WHERE status <> 'dead_letter') AS waiting,
       count(*) FILTER (WHERE status = 'dead_letter') AS dead_letter,
       min(created_at) FILTER (WHERE status <> 'dead_letter') AS oldest_waiting,
       min(next_attempt_at) FILTER (WHERE status = 'pending') AS next_attempt,
       (array_agg(last_error ORDER BY id DESC) FILTER (WHERE last_error <> ''))[1] AS last_error
  FROM (SELECT id, destination, status, created_at, next_attempt_at, last_error
          FROM outbox_events
         WHERE workspace_id = ? AND status IN ('pending', 'dispatching', 'dead_letter')
           AND starts_with(destination, ?)
         LIMIT ?) e
 GROUP BY destination
 ORDER BY destination`

// UndeliveredByDestination implements ports.Outbox.
func (o *Outbox) UndeliveredByDestination(ctx context.Context, prefix string, limit int) ([]ports.DestinationUndelivered, error) {
	if limit <= 0 {
		return []ports.DestinationUndelivered{}, nil
	}
	var rows []struct {
		Destination   string     `bun:"destination"`
		Waiting       int        `bun:"waiting"`
		DeadLetter    int        `bun:"dead_letter"`
		OldestWaiting *time.Time `bun:"oldest_waiting"`
		NextAttempt   *time.Time `bun:"next_attempt"`
		LastError     *string    `bun:"last_error"`
	}
	if err := o.db.NewRaw(selectUndeliveredByDestination, o.workspace, prefix, limit).Scan(ctx, &rows); err != nil {
		return nil, mapError(err, "outbox event")
	}
	out := make([]ports.DestinationUndelivered, len(rows))
	for i, r := range rows {
		out[i] = ports.DestinationUndelivered{Destination: r.Destination, Waiting: r.Waiting, DeadLetter: r.DeadLetter}
		if r.OldestWaiting != nil {
			out[i].OldestWaiting = *r.OldestWaiting
		}
		if r.NextAttempt != nil {
			out[i].NextAttempt = *r.NextAttempt
		}
		if r.LastError != nil {
			out[i].LastError = *r.LastError
		}
	}
	return out, nil
}
