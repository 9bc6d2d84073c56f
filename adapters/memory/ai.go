package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// aiTaskRepo is the ai_tasks table in one transaction.
type aiTaskRepo struct{ tableRepo[model.AITask] }

var _ = ports.Register(kindRepositories, func(t *tx) ports.AITaskRepository { return aiTaskRepo{aiTaskTable.in(t)} })

// billingKey is the one-record-per-task rule, (workspace, task).
func billingKey(workspace, task uuid.UUID) uniqueKey {
	return uniqueKey{"ai_billing_records_task_key", workspace.String() + "\x00" + task.String()}
}

// billing is the ai_billing_records table, by task id.
var billing = newRows[uuid.UUID, model.BillingRecord]()

// aiTaskTable is the ai_tasks table.
var aiTaskTable = taskTable[model.AITask]("AI task", "ai_tasks_pkey", nil)

func (r aiTaskRepo) Create(_ context.Context, a model.AITask) error {
	return aiTaskTable.create(r.t, a, productRef(a.ProductID))
}

func (r aiTaskRepo) Update(_ context.Context, a model.AITask) error {
	return aiTaskTable.update(r.t, a.ID, func(cur *model.AITask) {
		cur.Status, cur.Result, cur.Reason, cur.UpdatedAt = a.Status, a.Result, a.Reason, a.UpdatedAt
	})
}

// Bill writes the record unless the task's key is committed or written by
// an open transaction. (PostgreSQL's INSERT ... ON CONFLICT DO NOTHING
// would wait for that transaction and write the record if it rolled back;
// memory answers "already billed" at once.)
func (r aiTaskRepo) Bill(_ context.Context, b model.BillingRecord) (bool, error) {
	t := r.t
	if err := t.lockOwn("billing record", b.WorkspaceID); err != nil {
		return false, err
	}
	defer t.db.mu.Unlock()
	if _, ok := aiTaskTable.visibleLocked(t, b.TaskID); !ok {
		return false, missingReference("billing record", "AI task", b.TaskID)
	}
	if !t.db.reserveLocked(t, billingKey(b.WorkspaceID, b.TaskID)) {
		return false, nil
	}
	billing.mine(t)[b.TaskID] = copyBilling(b)
	return true, nil
}

func (r aiTaskRepo) BillingRecords(_ context.Context, taskID uuid.UUID) ([]model.BillingRecord, error) {
	t := r.t
	return inLock(t, func() ([]model.BillingRecord, error) {
		b, ok := billing.mine(t)[taskID]
		if !ok {
			b, ok = billing.committed(t)[taskID]
		}
		if !ok || b.WorkspaceID != t.workspace {
			return nil, nil
		}
		return []model.BillingRecord{copyBilling(b)}, nil
	})
}

func (r aiTaskRepo) List(_ context.Context, q ports.ListQuery) ([]model.AITask, error) {
	return aiTaskTable.list(r.t, q, func(a model.AITask, q ports.ListQuery) bool {
		return is(q.Status, string(a.Status)) && is(q.ProductID, a.ProductID) && is(q.Kind, string(a.Kind))
	})
}

func copyBilling(b model.BillingRecord) model.BillingRecord {
	dbTimes(&b.CreatedAt)
	return b
}
