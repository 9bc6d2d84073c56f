package memory

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// UndeliveredByDestination implements ports.Outbox, as PostgreSQL's
// selectUndeliveredByDestination: at most limit events read, in no
// particular order.
func (r outboxRepo) UndeliveredByDestination(_ context.Context, prefix string, limit int) ([]ports.DestinationUndelivered, error) {
	t := r.t
	return inLock(t, func() ([]ports.DestinationUndelivered, error) {
		byDestination := map[string]*ports.DestinationUndelivered{}
		newest := map[string]model.OutboxEvent{} // the newest with an error
		read := 0
		for _, row := range t.visibleEventsLocked() {
			e := row.event
			if read >= limit {
				break
			}
			if e.Status == model.OutboxDispatched || e.Destination == "" || !strings.HasPrefix(e.Destination, prefix) {
				continue
			}
			read++
			d := byDestination[e.Destination]
			if d == nil {
				d = &ports.DestinationUndelivered{Destination: e.Destination}
				byDestination[e.Destination] = d
			}
			if e.Status == model.OutboxDeadLetter {
				d.DeadLetter++
			} else {
				d.Waiting++
				if d.OldestWaiting.IsZero() || e.CreatedAt.Before(d.OldestWaiting) {
					d.OldestWaiting = e.CreatedAt
				}
			}
			if e.Status == model.OutboxPending && (d.NextAttempt.IsZero() || e.NextAttemptAt.Before(d.NextAttempt)) {
				d.NextAttempt = e.NextAttemptAt
			}
			if n, ok := newest[e.Destination]; e.LastError != "" && (!ok || bytes.Compare(n.ID[:], e.ID[:]) < 0) {
				newest[e.Destination] = e
				d.LastError = e.LastError
			}
		}
		out := make([]ports.DestinationUndelivered, 0, len(byDestination))
		for _, d := range byDestination {
			out = append(out, *d)
		}
		slices.SortFunc(out, func(a, b ports.DestinationUndelivered) int { return strings.Compare(a.Destination, b.Destination) })
		return out, nil
	})
}
