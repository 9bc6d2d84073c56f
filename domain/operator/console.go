// Package operator holds the platform operator's use cases, across
// workspaces: the backlog of each workspace, the dead letters and failed
// jobs of all of them grouped by cause, one looked at, and one or a whole
// group re-driven; the jobs workers parked until later, grouped by
// destination; the webhook deliveries not done, per endpoint; and an
// operation cancelled.
//
// It crosses workspaces the way the Dispatcher does: a discovery port
// names the workspaces with work (ids and counts only, ports.OutboxBacklog),
// then each workspace's rows are read in a unit of work scoped to that
// workspace, under row-level security. No read of rows ever spans two
// workspaces.
package operator

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// MaxWorkspaces bounds how many workspaces one view visits; a view that
// stops there says so (Truncated).
const MaxWorkspaces = 1000

// MaxDeadLetters bounds how many dead letters one view reads, over all
// workspaces; a view that stops there says so (Truncated), and a group
// re-drive moves what the view holds (run it again for the rest).
const MaxDeadLetters = 10 * dispatch.MaxAdminBatch

// backlogPage is how many workspaces one discovery call returns.
const backlogPage = 200

// Console is the operator's use cases. Re-drives go through dispatch.Admin,
// so a failed job is reopened exactly as a workspace admin's re-drive
// reopens it.
type Console struct {
	backlog ports.OutboxBacklog
	admin   *dispatch.Admin
	uow     ports.UnitOfWork
	clock   ports.Clock
	cancel  Canceller
}

// NewConsole builds the operator's use cases.
func NewConsole(backlog ports.OutboxBacklog, admin *dispatch.Admin, uow ports.UnitOfWork, clock ports.Clock, cancel Canceller) *Console {
	return &Console{backlog: backlog, admin: admin, uow: uow, clock: clock, cancel: cancel}
}

// Backlog is the outbox work not done yet, per workspace.
type Backlog struct {
	// Workspaces hold pending, dispatching or dead-lettered events, in id
	// order.
	Workspaces []ports.WorkspaceBacklog
	// Truncated says more than MaxWorkspaces workspaces hold work; the
	// first MaxWorkspaces are shown.
	Truncated bool
}

// Backlog returns the backlog of every workspace that has one (at most
// MaxWorkspaces).
func (c *Console) Backlog(ctx context.Context) (Backlog, error) {
	now := c.clock.Now()
	var b Backlog
	after := uuid.Nil
	for {
		page, err := c.backlog.Backlog(ctx, now, after, backlogPage)
		if err != nil {
			return Backlog{}, err
		}
		room := MaxWorkspaces - len(b.Workspaces)
		if len(page) > room {
			b.Workspaces = append(b.Workspaces, page[:room]...)
			b.Truncated = true
			return b, nil
		}
		b.Workspaces = append(b.Workspaces, page...)
		if len(page) < backlogPage {
			return b, nil
		}
		after = page[len(page)-1].Workspace
	}
}

// Group is the dead letters, of any workspace, that failed for one cause.
type Group struct {
	// Key names the group: its stage and cause. RedriveGroup takes it.
	Key string
	// Stage is "delivery" or "job" (dispatch.Stage).
	Stage string
	// Cause is the sanitized last error with its ids and counts replaced
	// (see Cause).
	Cause string
	// Example is one last error of the group as stored (already sanitized).
	Example string
	// EventTypes are the event types in the group, sorted.
	EventTypes []string
	// Workspaces is how many workspaces the group spans.
	Workspaces int
	// Events are the group's dead letters, oldest first in each workspace,
	// workspaces in id order.
	Events []model.OutboxEvent
}

// DeadLetters is every workspace's dead letters, grouped by cause.
type DeadLetters struct {
	// Groups, the largest first (then by key).
	Groups []Group
	// Total is how many dead letters the groups hold.
	Total int
	// Truncated says some dead letters are not shown: more workspaces than
	// MaxWorkspaces, a workspace with more than dispatch.MaxAdminBatch, or
	// more than MaxDeadLetters in all.
	Truncated bool
}

// DeadLetters reads the dead letters of every workspace that has some
// (discovered through the backlog), each workspace in its own unit of
// work, and groups them by stage and cause. A job a worker gave up on is a
// dead letter of stage "job": failed jobs are listed here too.
func (c *Console) DeadLetters(ctx context.Context) (DeadLetters, error) {
	backlog, err := c.Backlog(ctx)
	if err != nil {
		return DeadLetters{}, err
	}
	out := DeadLetters{Truncated: backlog.Truncated}
	index := map[string]int{}
	workspaces := map[string]map[uuid.UUID]bool{}
	types := map[string]map[string]bool{}
	for _, w := range backlog.Workspaces {
		if w.DeadLetter == 0 {
			continue
		}
		room := min(dispatch.MaxAdminBatch, MaxDeadLetters-out.Total)
		if room == 0 {
			out.Truncated = true
			break
		}
		events, err := c.admin.ListDeadLetters(ctx, w.Workspace, room)
		if err != nil {
			return DeadLetters{}, err
		}
		out.Truncated = out.Truncated || int64(len(events)) < w.DeadLetter && len(events) == room
		for _, e := range events {
			stage := dispatch.Stage(e)
			cause := Cause(e.LastError)
			key := GroupKey(stage, cause)
			i, ok := index[key]
			if !ok {
				i = len(out.Groups)
				index[key] = i
				out.Groups = append(out.Groups, Group{Key: key, Stage: stage, Cause: cause, Example: e.LastError})
				workspaces[key] = map[uuid.UUID]bool{}
				types[key] = map[string]bool{}
			}
			out.Groups[i].Events = append(out.Groups[i].Events, e)
			workspaces[key][e.WorkspaceID] = true
			types[key][e.Type] = true
			out.Total++
		}
	}
	for i := range out.Groups {
		g := &out.Groups[i]
		g.Workspaces = len(workspaces[g.Key])
		for t := range types[g.Key] {
			g.EventTypes = append(g.EventTypes, t)
		}
		slices.Sort(g.EventTypes)
	}
	slices.SortStableFunc(out.Groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(len(b.Events), len(a.Events)), cmp.Compare(a.Key, b.Key))
	})
	return out, nil
}

// DeadLetter reads one dead letter of workspace, in a unit of work scoped
// to it. CodeNotFound when there is no such event or it is not a dead
// letter (any more).
func (c *Console) DeadLetter(ctx context.Context, workspace, id uuid.UUID) (model.OutboxEvent, error) {
	e, err := ports.Query(ctx, c.uow, workspace, func(ctx context.Context, tx ports.Tx) (model.OutboxEvent, error) {
		return tx.Outbox().Get(ctx, id)
	})
	if err != nil {
		return model.OutboxEvent{}, err
	}
	if e.Status != model.OutboxDeadLetter {
		return model.OutboxEvent{}, domain.Errorf(domain.CodeNotFound, "event is not a dead letter")
	}
	return e, nil
}

// ShownPayload is the part of a dead letter's payload an operator may see:
// the payload itself (ids and versions by construction) when it passes the
// secret guard, nil otherwise.
func ShownPayload(e model.OutboxEvent) json.RawMessage {
	if len(e.Payload) == 0 || model.CheckPayloadSafe(e.Payload) != nil {
		return nil
	}
	return e.Payload
}

// Redrive re-drives dead letters of one workspace by id (see
// dispatch.Admin.Redrive), and says how many moved. At least one id.
func (c *Console) Redrive(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error) {
	if len(ids) == 0 {
		return 0, domain.Errorf(domain.CodeValidation, "name at least one event to re-drive")
	}
	return c.admin.Redrive(ctx, workspace, ids)
}

// Release retires dead letters of one workspace by id without running
// their jobs again, so the ordering keys they hold go on (see
// dispatch.Admin.Release), and says how many. At least one id.
func (c *Console) Release(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error) {
	if len(ids) == 0 {
		return 0, domain.Errorf(domain.CodeValidation, "name at least one event to release")
	}
	return c.admin.Release(ctx, workspace, ids)
}

// Redriven is what a group re-drive did.
type Redriven struct {
	// Count is how many events went back to pending.
	Count int
	// ByWorkspace holds the group's ids asked for, per workspace visited
	// (for the audit line); ids that were no longer dead letters are among
	// them but not counted.
	ByWorkspace map[uuid.UUID][]uuid.UUID
}

// RedriveGroup re-drives every dead letter of the group named key, as the
// groups read now: workspace by workspace, each event in its own unit of
// work with its job reopened. Events that stopped being dead letters
// meanwhile are left alone. CodeNotFound when no dead letter has that
// cause any more. On an error, what moved before it is returned with it.
func (c *Console) RedriveGroup(ctx context.Context, key string) (Redriven, error) {
	dl, err := c.DeadLetters(ctx)
	if err != nil {
		return Redriven{}, err
	}
	i := slices.IndexFunc(dl.Groups, func(g Group) bool { return g.Key == key })
	if i < 0 {
		return Redriven{}, domain.Errorf(domain.CodeNotFound, "no dead letters in this group")
	}
	byWorkspace := map[uuid.UUID][]uuid.UUID{}
	var order []uuid.UUID
	for _, e := range dl.Groups[i].Events {
		if _, ok := byWorkspace[e.WorkspaceID]; !ok {
			order = append(order, e.WorkspaceID)
		}
		byWorkspace[e.WorkspaceID] = append(byWorkspace[e.WorkspaceID], e.ID)
	}
	out := Redriven{ByWorkspace: map[uuid.UUID][]uuid.UUID{}}
	for _, ws := range order {
		n, err := c.admin.Redrive(ctx, ws, byWorkspace[ws])
		out.Count += n
		out.ByWorkspace[ws] = byWorkspace[ws]
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
