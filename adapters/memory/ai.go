package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type aiTaskRepo struct{ t *tx }

var _ ports.AITaskRepository = aiTaskRepo{}

func aiTaskKey(id uuid.UUID) uniqueKey { return uniqueKey{"ai_tasks_pkey", id.String()} }

// billingKey is the one-record-per-task rule, (workspace, task).
func billingKey(workspace, task uuid.UUID) uniqueKey {
	return uniqueKey{"ai_billing_records_task_key", workspace.String() + "\x00" + task.String()}
}

func (r aiTaskRepo) Create(_ context.Context, a domain.AITask) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if err := t.ownWorkspace("AI task", a.WorkspaceID); err != nil {
		return err
	}
	if _, ok := t.productLocked(a.ProductID); !ok {
		return missingReference("AI task", "product", a.ProductID)
	}
	if !t.db.reserveLocked(t, aiTaskKey(a.ID)) {
		return domain.Errorf(domain.CodeConflict, "AI task %s already exists", a.ID)
	}
	t.aiTasks[a.ID] = copyAITask(a)
	return nil
}

func (r aiTaskRepo) Get(_ context.Context, id uuid.UUID) (domain.AITask, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return domain.AITask{}, err
	}
	defer t.db.mu.Unlock()
	a, ok := r.visibleLocked(id)
	if !ok {
		return domain.AITask{}, aiTaskNotFound(id)
	}
	return copyAITask(a), nil
}

func (r aiTaskRepo) Update(_ context.Context, a domain.AITask) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	cur, ok := r.visibleLocked(a.ID)
	if !ok {
		return aiTaskNotFound(a.ID)
	}
	cur.Status = a.Status
	cur.Result = a.Result
	cur.Reason = a.Reason
	cur.UpdatedAt = a.UpdatedAt
	t.aiTasks[a.ID] = copyAITask(cur)
	return nil
}

// Bill writes the record unless the task's key is committed or written by
// an open transaction. (PostgreSQL's INSERT ... ON CONFLICT DO NOTHING
// would wait for that transaction and write the record if it rolled back;
// memory answers "already billed" at once.)
func (r aiTaskRepo) Bill(_ context.Context, b domain.BillingRecord) (bool, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return false, err
	}
	defer t.db.mu.Unlock()
	if err := t.ownWorkspace("billing record", b.WorkspaceID); err != nil {
		return false, err
	}
	if _, ok := r.visibleLocked(b.TaskID); !ok {
		return false, missingReference("billing record", "AI task", b.TaskID)
	}
	if !t.db.reserveLocked(t, billingKey(b.WorkspaceID, b.TaskID)) {
		return false, nil
	}
	t.billing[b.TaskID] = copyBilling(b)
	return true, nil
}

func (r aiTaskRepo) BillingRecords(_ context.Context, taskID uuid.UUID) ([]domain.BillingRecord, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return nil, err
	}
	defer t.db.mu.Unlock()
	b, ok := t.billing[taskID]
	if !ok {
		b, ok = t.db.billing[taskID]
	}
	if !ok || b.WorkspaceID != t.workspace {
		return nil, nil
	}
	return []domain.BillingRecord{copyBilling(b)}, nil
}

func (r aiTaskRepo) visibleLocked(id uuid.UUID) (domain.AITask, bool) {
	a, ok := r.t.aiTasks[id]
	if !ok {
		a, ok = r.t.db.aiTasks[id]
	}
	if !ok || a.WorkspaceID != r.t.workspace {
		return domain.AITask{}, false
	}
	return a, true
}

func aiTaskNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "AI task %s not found", id)
}
