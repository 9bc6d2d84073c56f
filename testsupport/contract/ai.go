package contract

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// aiTaskTable is the AI tasks table to the table contract (tables.go).
var aiTaskTable = taskTable(table[model.AITask]{
	repo: func(tx ports.Tx) tableRepo[model.AITask] { return ports.Repository[ports.AITaskRepository](tx) },
	row: func(t *testing.T, h Harness, ws uuid.UUID) model.AITask {
		return newAITask(ws, newProductIn(t, h, ws).ID)
	},
	full:      func(a *model.AITask) { a.Result = "Home > Kitchen > Mugs" },
	updates:   "replaces status, result, reason and updated_at only",
	mutable:   func(a *model.AITask) { a.Result = "A lovely mug." },
	immutable: func(a *model.AITask) { a.Kind, a.Instructions = model.AIImage, "other" },
})

func newAITask(ws, product uuid.UUID) model.AITask {
	at := writeTime()
	return model.AITask{
		TaskState:    newTaskState(ws, at),
		ProductID:    product,
		Kind:         model.AICategory,
		Instructions: "short, friendly; no emoji 🙂",
	}
}

func bill(t *testing.T, h Harness, r model.BillingRecord) (bool, error) {
	t.Helper()
	return query(t, h, r.WorkspaceID, func(ctx context.Context, tx ports.Tx) (bool, error) {
		return ports.Repository[ports.AITaskRepository](tx).Bill(ctx, r)
	})
}

func billingRecords(t *testing.T, h Harness, ws, task uuid.UUID) []model.BillingRecord {
	t.Helper()
	return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.BillingRecord, error) {
		return ports.Repository[ports.AITaskRepository](tx).BillingRecords(ctx, task)
	})
}

func testAITasks(t *testing.T, h Harness) {
	t.Run("a task is billed once", func(t *testing.T) {
		ws := newWorkspace(t, h)
		a := newAITask(ws, newProductIn(t, h, ws).ID)
		require.NoError(t, aiTaskTable.create(t, h, a))
		require.Empty(t, billingRecords(t, h, ws, a.ID))

		rec := model.BillingRecord{WorkspaceID: ws, TaskID: a.ID, Units: 12, CreatedAt: writeTime()}
		written, err := bill(t, h, rec)
		require.NoError(t, err)
		require.True(t, written)
		again := rec
		again.Units = 99
		written, err = bill(t, h, again)
		require.NoError(t, err)
		require.False(t, written)
		// Twice in one transaction: the second writes nothing either, and
		// the transaction goes on.
		other := newAITask(ws, a.ProductID)
		require.NoError(t, aiTaskTable.create(t, h, other))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			r := model.BillingRecord{WorkspaceID: ws, TaskID: other.ID, Units: 1, CreatedAt: writeTime()}
			first, err := ports.Repository[ports.AITaskRepository](tx).Bill(ctx, r)
			require.NoError(t, err)
			second, err := ports.Repository[ports.AITaskRepository](tx).Bill(ctx, r)
			require.NoError(t, err)
			require.Equal(t, []bool{true, false}, []bool{first, second})
			return nil
		})

		want := rec
		want.CreatedAt = dbTime(rec.CreatedAt)
		require.Equal(t, []model.BillingRecord{want}, billingRecords(t, h, ws, a.ID))
		require.Len(t, billingRecords(t, h, ws, other.ID), 1)
	})

	t.Run("a missing product or task is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		requireCode(t, aiTaskTable.create(t, h, newAITask(ws, uuid.New())), domain.CodeConflict)
		_, err := bill(t, h, model.BillingRecord{WorkspaceID: ws, TaskID: uuid.New(), Units: 1, CreatedAt: writeTime()})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("billing of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		a := aiTaskTable.row(t, h, wsA)
		require.NoError(t, aiTaskTable.create(t, h, a))
		_, err := bill(t, h, model.BillingRecord{WorkspaceID: wsA, TaskID: a.ID, Units: 1, CreatedAt: writeTime()})
		require.NoError(t, err)

		require.Empty(t, billingRecords(t, h, wsB, a.ID))
		// Billing another workspace's task: refused, and nothing written.
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			_, err := ports.Repository[ports.AITaskRepository](tx).Bill(ctx, model.BillingRecord{WorkspaceID: wsA, TaskID: a.ID, Units: 5, CreatedAt: writeTime()})
			return err
		})
		requireCode(t, err, domain.CodeForbidden)
		_, err = bill(t, h, model.BillingRecord{WorkspaceID: wsB, TaskID: a.ID, Units: 5, CreatedAt: writeTime()})
		requireCode(t, err, domain.CodeConflict)
		require.Len(t, billingRecords(t, h, wsA, a.ID), 1)
	})
}

// The AI task kind's contract (kinds.go).
var _ = registerKind("ai_tasks", kindContract{
	table: aiTaskTable.check,
	list:  listAITasks,
	own:   testAITasks,
})

// listAITasks is the list contract (lists.go) of its table.
func listAITasks(t *testing.T, h Harness) {
	// The even rows of a workspace are tasks of one product, the odd
	// ones each of a product of its own.
	even := map[uuid.UUID]uuid.UUID{}
	checkList(t, h, listCase[model.AITask]{
		table: aiTaskTable,
		mark: func(a *model.AITask, i int) {
			if i%2 == 0 {
				if even[a.WorkspaceID] == uuid.Nil {
					even[a.WorkspaceID] = a.ProductID
				}
				a.ProductID = even[a.WorkspaceID]
			}
		},
		filter: func(q *ports.ListQuery, ws uuid.UUID) { q.ProductID = even[ws] },
	})
}
