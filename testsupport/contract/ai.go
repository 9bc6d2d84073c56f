package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func newAITask(ws, product uuid.UUID) model.AITask {
	at := writeTime()
	return model.AITask{
		TaskState:    newTaskState(ws, at),
		ProductID:    product,
		Kind:         model.AICategory,
		Instructions: "short, friendly; no emoji 🙂",
	}
}

func createAITask(t *testing.T, h Harness, a model.AITask) error {
	t.Helper()
	return transact(t, h, a.WorkspaceID, func(ctx context.Context, tx ports.Tx) error { return tx.AITasks().Create(ctx, a) })
}

func getAITask(t *testing.T, h Harness, ws, id uuid.UUID) (model.AITask, error) {
	t.Helper()
	var a model.AITask
	err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		a, err = tx.AITasks().Get(ctx, id)
		return err
	})
	return a, err
}

func bill(t *testing.T, h Harness, r model.BillingRecord) (bool, error) {
	t.Helper()
	var written bool
	err := transact(t, h, r.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		written, err = tx.AITasks().Bill(ctx, r)
		return err
	})
	return written, err
}

func billingRecords(t *testing.T, h Harness, ws, task uuid.UUID) []model.BillingRecord {
	t.Helper()
	var recs []model.BillingRecord
	inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		recs, err = tx.AITasks().BillingRecords(ctx, task)
		return err
	})
	return recs
}

func testAITasks(t *testing.T, h Harness) {
	t.Run("create then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		a := newAITask(ws, newProductIn(t, h, ws).ID)
		a.Status = model.TaskSucceeded
		a.Result = "Home > Kitchen > Mugs"
		a.Reason = "r"
		require.NoError(t, createAITask(t, h, a))
		got, err := getAITask(t, h, ws, a.ID)
		require.NoError(t, err)
		want := a
		want.CreatedAt, want.UpdatedAt = dbTime(a.CreatedAt), dbTime(a.UpdatedAt)
		require.Equal(t, want, got)
	})

	t.Run("update replaces status, result, reason and updated_at only", func(t *testing.T) {
		ws := newWorkspace(t, h)
		a := newAITask(ws, newProductIn(t, h, ws).ID)
		require.NoError(t, createAITask(t, h, a))
		changed := a
		changed.Status = model.TaskSucceeded
		changed.Result = "A lovely mug."
		changed.Reason = "ok"
		changed.UpdatedAt = a.UpdatedAt.Add(time.Minute)
		changed.Kind = model.AIImage
		changed.Instructions = "other"
		changed.OperationID = uuid.New()
		changed.CreatedAt = a.CreatedAt.Add(-time.Hour)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.AITasks().Update(ctx, changed) })
		want := a
		want.Status, want.Result, want.Reason = changed.Status, changed.Result, changed.Reason
		want.CreatedAt, want.UpdatedAt = dbTime(a.CreatedAt), dbTime(changed.UpdatedAt)
		got, err := getAITask(t, h, ws, a.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("a task is billed once", func(t *testing.T) {
		ws := newWorkspace(t, h)
		a := newAITask(ws, newProductIn(t, h, ws).ID)
		require.NoError(t, createAITask(t, h, a))
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
		require.NoError(t, createAITask(t, h, other))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			r := model.BillingRecord{WorkspaceID: ws, TaskID: other.ID, Units: 1, CreatedAt: writeTime()}
			first, err := tx.AITasks().Bill(ctx, r)
			require.NoError(t, err)
			second, err := tx.AITasks().Bill(ctx, r)
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
		requireCode(t, createAITask(t, h, newAITask(ws, uuid.New())), domain.CodeConflict)
		_, err := bill(t, h, model.BillingRecord{WorkspaceID: ws, TaskID: uuid.New(), Units: 1, CreatedAt: writeTime()})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("missing is not found, an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getAITask(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.AITasks().Update(ctx, newAITask(ws, uuid.New()))
		})
		requireCode(t, err, domain.CodeNotFound)
		product := newProductIn(t, h, ws).ID
		a := newAITask(ws, product)
		require.NoError(t, createAITask(t, h, a))
		again := newAITask(ws, product)
		again.ID = a.ID
		requireCode(t, createAITask(t, h, again), domain.CodeConflict)
	})

	t.Run("tasks and billing of another workspace are invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		a := newAITask(wsA, newProductIn(t, h, wsA).ID)
		require.NoError(t, createAITask(t, h, a))
		_, err := bill(t, h, model.BillingRecord{WorkspaceID: wsA, TaskID: a.ID, Units: 1, CreatedAt: writeTime()})
		require.NoError(t, err)

		_, err = getAITask(t, h, wsB, a.ID)
		requireCode(t, err, domain.CodeNotFound)
		require.Empty(t, billingRecords(t, h, wsB, a.ID))
		hijack := a
		hijack.Status = model.TaskFailed
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error { return tx.AITasks().Update(ctx, hijack) })
		requireCode(t, err, domain.CodeNotFound)
		// Billing another workspace's task: refused, and nothing written.
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			_, err := tx.AITasks().Bill(ctx, model.BillingRecord{WorkspaceID: wsA, TaskID: a.ID, Units: 5, CreatedAt: writeTime()})
			return err
		})
		requireCode(t, err, domain.CodeForbidden)
		_, err = bill(t, h, model.BillingRecord{WorkspaceID: wsB, TaskID: a.ID, Units: 5, CreatedAt: writeTime()})
		requireCode(t, err, domain.CodeConflict)
		require.Len(t, billingRecords(t, h, wsA, a.ID), 1)
	})
}
