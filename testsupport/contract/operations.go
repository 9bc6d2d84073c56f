package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// operationTable is the operations table to the table contract (tables.go).
var operationTable = table[model.Operation]{
	repo: func(tx ports.Tx) tableRepo[model.Operation] { return tx.Operations() },
	keys: func(op *model.Operation) (*uuid.UUID, *uuid.UUID) { return &op.ID, &op.WorkspaceID },
	row:  func(_ *testing.T, _ Harness, ws uuid.UUID) model.Operation { return newOperation(ws) },
	stored: func(op model.Operation) model.Operation {
		op.CreatedAt, op.UpdatedAt = dbTime(op.CreatedAt), dbTime(op.UpdatedAt)
		return op
	},
	updates: "replaces status, error and updated_at only",
	mutable: func(op *model.Operation) {
		op.Status, op.Error = model.OperationFailed, "the platform refused the credentials"
		op.UpdatedAt = op.UpdatedAt.Add(time.Minute)
	},
	immutable: func(op *model.Operation) {
		op.Kind, op.ResourceType, op.ResourceID, op.CreatedBy = "other.kind", "other", uuid.New(), uuid.New()
		op.CreatedAt = op.CreatedAt.Add(-time.Hour)
	},
}

func newOperation(workspace uuid.UUID) model.Operation {
	at := now()
	return model.Operation{
		ID:           uuid.New(),
		WorkspaceID:  workspace,
		Kind:         model.OperationStoreVerify,
		Status:       model.OperationPending,
		ResourceType: "store",
		ResourceID:   uuid.New(),
		CreatedBy:    uuid.New(),
		CreatedAt:    at,
		UpdatedAt:    at,
	}
}

// createOperation writes op, which must succeed.
func createOperation(t *testing.T, h Harness, op model.Operation) {
	t.Helper()
	require.NoError(t, operationTable.create(t, h, op))
}

func listOperations(t *testing.T, h Harness, ws uuid.UUID, f ports.ListQuery) []model.Operation {
	t.Helper()
	return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.Operation, error) {
		return tx.Operations().List(ctx, f)
	})
}

func operationIDs(ops []model.Operation) []uuid.UUID {
	return ids(ops, func(op model.Operation) uuid.UUID { return op.ID })
}

func testOperationList(t *testing.T, h Harness) {
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	// Six operations, ids time-ordered (UUIDv7), over two kinds and two
	// statuses; all[0] is the oldest.
	var all []model.Operation
	// Two of the declared kinds, any two.
	kind, otherKind := kinds.All[0].OperationKind, kinds.All[1].OperationKind
	for i := range 6 {
		op := newOperation(ws)
		op.ID = uuid.Must(uuid.NewV7())
		op.Kind = []string{kind, otherKind}[i%2]
		op.Status = []model.OperationStatus{model.OperationPending, model.OperationSucceeded, model.OperationSucceeded}[i%3]
		createOperation(t, h, op)
		all = append(all, operationTable.stored(op))
	}
	createOperation(t, h, newOperation(other))
	newestFirst := func(pick func(model.Operation) bool) []uuid.UUID {
		var ids []uuid.UUID
		for i := len(all) - 1; i >= 0; i-- {
			if pick(all[i]) {
				ids = append(ids, all[i].ID)
			}
		}
		return ids
	}
	every := func(model.Operation) bool { return true }

	t.Run("newest first, every field", func(t *testing.T) {
		got := listOperations(t, h, ws, ports.ListQuery{Limit: 100})
		require.Equal(t, newestFirst(every), operationIDs(got))
		require.Equal(t, all[5], got[0])
	})

	t.Run("a limit of zero or less returns none", func(t *testing.T) {
		require.Empty(t, listOperations(t, h, ws, ports.ListQuery{}))
		require.Empty(t, listOperations(t, h, ws, ports.ListQuery{Limit: -1}))
	})

	t.Run("filters by status and kind", func(t *testing.T) {
		got := listOperations(t, h, ws, ports.ListQuery{Status: string(model.OperationSucceeded), Limit: 100})
		require.Equal(t, newestFirst(func(op model.Operation) bool { return op.Status == model.OperationSucceeded }), operationIDs(got))
		got = listOperations(t, h, ws, ports.ListQuery{Kind: kind, Limit: 100})
		require.Equal(t, newestFirst(func(op model.Operation) bool { return op.Kind == kind }), operationIDs(got))
		got = listOperations(t, h, ws, ports.ListQuery{Kind: kind, Status: string(model.OperationPending), Limit: 100})
		require.Equal(t, newestFirst(func(op model.Operation) bool {
			return op.Kind == kind && op.Status == model.OperationPending
		}), operationIDs(got))
		require.Empty(t, listOperations(t, h, ws, ports.ListQuery{Kind: "no.such.kind", Limit: 100}))
	})

	t.Run("pages with the starting_after cursor", func(t *testing.T) {
		var paged []uuid.UUID
		f := ports.ListQuery{Limit: 4}
		for {
			page := listOperations(t, h, ws, f)
			if len(page) == 0 {
				break
			}
			require.LessOrEqual(t, len(page), 4)
			paged = append(paged, operationIDs(page)...)
			f.StartingAfter = page[len(page)-1].ID
		}
		require.Equal(t, newestFirst(every), paged)

		f = ports.ListQuery{StartingAfter: all[3].ID, Status: string(model.OperationSucceeded), Limit: 1}
		require.Equal(t, []uuid.UUID{all[2].ID}, operationIDs(listOperations(t, h, ws, f)))
	})

	t.Run("another workspace's operations are not listed", func(t *testing.T) {
		got := listOperations(t, h, other, ports.ListQuery{Limit: 100})
		require.Len(t, got, 1)
		require.Equal(t, other, got[0].WorkspaceID)
	})
}

// testOperationOutcomes: an operation's outcome, once recorded, is never
// overwritten by an update made from an older read (two deliveries of one
// job), and only a reopen moves a failed operation on.
func testOperationOutcomes(t *testing.T, h Harness) {
	ws := newWorkspace(t, h)
	running := func(t *testing.T) model.Operation {
		op := newOperation(ws)
		op.Start(now())
		createOperation(t, h, op)
		return op
	}
	update := func(t *testing.T, op model.Operation) error {
		return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Update(ctx, op) })
	}
	stored := func(t *testing.T, id uuid.UUID) model.Operation {
		return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.Operation, error) { return tx.Operations().Get(ctx, id) })
	}
	requireFinished := func(t *testing.T, err error) {
		t.Helper()
		requireCode(t, err, domain.CodeInvalidState)
		require.ErrorIs(t, err, ports.ErrOperationFinished)
	}

	t.Run("an update from a read made before the outcome changes nothing", func(t *testing.T) {
		op := running(t)
		won, lost := op, op // both read it running
		won.Succeed(now())
		require.NoError(t, update(t, won))
		lost.Fail("the platform says: already in progress", now())
		requireFinished(t, update(t, lost))
		require.Equal(t, model.OperationSucceeded, stored(t, op.ID).Status)

		lost = op
		lost.Start(now())
		requireFinished(t, update(t, lost))
		lost.Reopen(now()) // a succeeded operation is never reopened
		requireFinished(t, update(t, lost))
		require.Equal(t, operationTable.stored(won), stored(t, op.ID))
	})

	t.Run("a failed operation takes a reopen and nothing else", func(t *testing.T) {
		op := running(t)
		op.Fail("gave up", now())
		require.NoError(t, update(t, op))
		other := op
		other.Succeed(now())
		requireFinished(t, update(t, other))
		op.Reopen(now())
		require.NoError(t, update(t, op))
		require.Equal(t, model.OperationPending, stored(t, op.ID).Status)
	})

	t.Run("a missing operation is not found", func(t *testing.T) {
		op := newOperation(ws)
		op.Succeed(now())
		requireCode(t, update(t, op), domain.CodeNotFound)
	})

	t.Run("of two transactions ending one operation the first's outcome stands", func(t *testing.T) {
		op := running(t)
		outcomes := [2]model.Operation{op, op}
		outcomes[0].Succeed(now())
		outcomes[1].Fail("the platform says: already in progress", now())
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, func(i int, ctx context.Context, tx ports.Tx) error {
			// The plain read a job's end makes first: it locks nothing.
			if _, err := tx.Operations().Get(ctx, op.ID); err != nil {
				return err
			}
			return tx.Operations().Update(ctx, outcomes[i])
		}))
		// The loser waits for the winner's row lock and then sees its
		// outcome.
		requireFinished(t, loserErr)
		require.Equal(t, operationTable.stored(outcomes[winner]), stored(t, op.ID))
	})
}
