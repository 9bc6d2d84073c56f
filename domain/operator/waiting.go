package operator

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// MaxWaiting bounds how many parked events one view of the waiting jobs
// reads, over all workspaces, as MaxDeadLetters bounds the dead letters.
const MaxWaiting = MaxDeadLetters

// NoDestination names the group of the parked jobs that call nothing
// outside (an event without a destination).
const NoDestination = "(none)"

// WaitingDestination is the jobs that workers parked until later for one
// destination: its breaker open, its pace spent, or a transient failure's
// backoff.
type WaitingDestination struct {
	// Destination is "system/account" (model.Destination), or NoDestination.
	Destination string
	// Jobs is how many parked events the destination holds.
	Jobs int
	// Workspaces is how many workspaces they belong to.
	Workspaces int
	// EarliestDue and LatestDue bound their next_attempt_at: when the first
	// and the last of them is published again.
	EarliestDue, LatestDue time.Time
	// Kind, WaitedFor and Reason are why one of them waits: the kind of
	// its wait, the destination it waits for (its own or its platform;
	// empty for a wait that is no destination's) and its last error, the
	// reason for people, sanitized when the worker wrote it.
	Kind      model.JobWaitKind
	WaitedFor string
	Reason    string
}

// Waiting is every workspace's parked jobs, grouped by destination.
type Waiting struct {
	// Destinations, the most jobs first (then by name).
	Destinations []WaitingDestination
	// Total is how many parked events the destinations hold.
	Total int
	// Truncated says some parked events are not counted: more workspaces
	// than MaxWorkspaces, a workspace with more than dispatch.MaxAdminBatch,
	// or more than MaxWaiting in all.
	Truncated bool
}

// Waiting reads the parked events (ports.Outbox.ListParked) of every
// workspace with pending events (discovered through the backlog), each
// workspace in its own unit of work, and groups them by destination. A
// destination with many jobs waiting usually has its breaker open in the
// workers.
func (c *Console) Waiting(ctx context.Context) (Waiting, error) {
	backlog, err := c.Backlog(ctx)
	if err != nil {
		return Waiting{}, err
	}
	g := newWaitingGroups()
	truncated := backlog.Truncated
	for _, w := range backlog.Workspaces {
		if w.Pending == 0 {
			continue
		}
		room := min(dispatch.MaxAdminBatch, MaxWaiting-g.total)
		// One more than room tells a cut list from a full one; with no room
		// left, that one says whether this workspace holds any.
		events, err := ports.Query(ctx, c.uow, w.Workspace, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
			return tx.Outbox().ListParked(ctx, room+1)
		})
		if err != nil {
			return Waiting{}, err
		}
		if len(events) > room {
			truncated = true
			events = events[:room]
		}
		g.add(events)
		if truncated && g.total == MaxWaiting {
			break
		}
	}
	return g.result(truncated), nil
}

// waitingGroups gathers parked events by destination.
type waitingGroups struct {
	index      map[string]int
	groups     []WaitingDestination
	workspaces map[string]map[uuid.UUID]bool
	total      int
}

func newWaitingGroups() *waitingGroups {
	return &waitingGroups{index: map[string]int{}, workspaces: map[string]map[uuid.UUID]bool{}}
}

func (g *waitingGroups) add(events []model.OutboxEvent) {
	for _, e := range events {
		dest := cmp.Or(e.Destination, NoDestination)
		i, ok := g.index[dest]
		if !ok {
			i = len(g.groups)
			g.index[dest] = i
			g.groups = append(g.groups, WaitingDestination{Destination: dest, EarliestDue: e.NextAttemptAt,
				LatestDue: e.NextAttemptAt, Kind: e.WaitKind, WaitedFor: e.WaitedFor, Reason: e.LastError})
			g.workspaces[dest] = map[uuid.UUID]bool{}
		}
		d := &g.groups[i]
		d.Jobs++
		if e.NextAttemptAt.Before(d.EarliestDue) {
			d.EarliestDue = e.NextAttemptAt
		}
		if e.NextAttemptAt.After(d.LatestDue) {
			d.LatestDue = e.NextAttemptAt
		}
		g.workspaces[dest][e.WorkspaceID] = true
		g.total++
	}
}

func (g *waitingGroups) result(truncated bool) Waiting {
	for i := range g.groups {
		g.groups[i].Workspaces = len(g.workspaces[g.groups[i].Destination])
	}
	slices.SortStableFunc(g.groups, func(a, b WaitingDestination) int {
		return cmp.Or(cmp.Compare(b.Jobs, a.Jobs), cmp.Compare(a.Destination, b.Destination))
	})
	return Waiting{Destinations: g.groups, Total: g.total, Truncated: truncated}
}
