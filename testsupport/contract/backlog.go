package contract

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/ports"
)

// The operators' per-workspace backlog (ports.OutboxBacklog): counts of the
// events not yet dispatched and the oldest due age, workspace by workspace,
// across every workspace, with a cursor.
func testOutboxBacklog(t *testing.T, h Harness) {
	// backlogOf pages through every workspace, limit at a time, and returns
	// what it says of each.
	backlogOf := func(t *testing.T, at time.Time, limit int) map[uuid.UUID]ports.WorkspaceBacklog {
		t.Helper()
		all := map[uuid.UUID]ports.WorkspaceBacklog{}
		after := uuid.Nil
		for {
			page, err := h.OutboxBacklog.Backlog(t.Context(), at, after, limit)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), limit)
			require.True(t, slices.IsSortedFunc(page, func(a, b ports.WorkspaceBacklog) int {
				return slices.Compare(a.Workspace[:], b.Workspace[:])
			}), "id order")
			for _, b := range page {
				require.Positive(t, slices.Compare(b.Workspace[:], after[:]), "after the cursor")
				all[b.Workspace] = b
			}
			if len(page) < limit {
				return all
			}
			after = page[len(page)-1].Workspace
		}
	}

	t.Run("backlog counts what is not dispatched, per workspace", func(t *testing.T) {
		at := now()
		busy, parked, done, empty := newWorkspace(t, h), newWorkspace(t, h), newWorkspace(t, h), newWorkspace(t, h)
		appendEvents(t, h, busy, eventDueAt(t, busy, at.Add(-3*time.Hour)))
		require.Len(t, claimDue(t, h, busy, "d1", at, 1), 1) // dispatching, lease running
		appendEvents(t, h, busy, eventDueAt(t, busy, at.Add(-time.Hour)), eventDueAt(t, busy, at.Add(time.Hour)))
		deadLetterEvent(t, h, busy, at.Add(-5*time.Hour))
		deadLetterEvent(t, h, parked, at.Add(-time.Hour))
		deadLetterEvent(t, h, parked, at.Add(-time.Hour))
		dispatchedEvent(t, h, done, at.Add(-time.Hour))
		t.Cleanup(func() {
			for _, ws := range []uuid.UUID{busy, parked, done} {
				drain(t, h, ws)
			}
		})

		for _, limit := range []int{1, 3, 10000} {
			got := backlogOf(t, at, limit)
			require.Equal(t, ports.WorkspaceBacklog{Workspace: busy, Pending: 2, Dispatching: 1, DeadLetter: 1, OldestDueAge: time.Hour},
				got[busy], "limit %d: the pending event due an hour ago is the oldest due one (the lease runs)", limit)
			require.Equal(t, ports.WorkspaceBacklog{Workspace: parked, DeadLetter: 2}, got[parked], "limit %d: dead letters are never due", limit)
			require.NotContains(t, got, done, "only dispatched events")
			require.NotContains(t, got, empty)
		}

		// The lease runs out: the dispatching event is the oldest due one.
		later := at.Add(2 * lease)
		require.Equal(t, 2*lease+time.Hour, backlogOf(t, later, 10000)[busy].OldestDueAge)

		page, err := h.OutboxBacklog.Backlog(t.Context(), at, uuid.Nil, 0)
		require.NoError(t, err)
		require.Empty(t, page, "limit 0")
	})
}
