package ai

import (
	"context"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// MaxInstructions bounds the user's prompt addition, in characters.
const MaxInstructions = 2000

// ResourceType names AI tasks in operations and outbox events.
const ResourceType = "ai_task"

// Service starts and reads AI tasks.
type Service struct {
	uow   ports.UnitOfWork
	clock ports.Clock
	ids   ports.IDGenerator
}

func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{uow: uow, clock: clock, ids: ids}
}

// StartCommand asks for one generation for a product.
type StartCommand struct {
	ProductID    uuid.UUID
	Kind         domain.AIKind
	Instructions string
}

// Start writes, in tx, a pending AI task for a product of the workspace,
// the operation that tracks it and the ai.task event. It runs inside the
// caller's transaction so the idempotency record commits with it.
//
// Errors: CodeValidation for an unknown kind, a missing product id or
// instructions longer than MaxInstructions characters (or not UTF-8);
// CodeNotFound if the workspace has no such product; what the repositories
// return.
func (s *Service) Start(ctx context.Context, tx ports.Tx, p domain.Principal, cmd StartCommand) (domain.AITask, domain.Operation, error) {
	if err := cmd.validate(); err != nil {
		return domain.AITask{}, domain.Operation{}, err
	}
	if _, err := tx.Products().Get(ctx, cmd.ProductID); err != nil {
		return domain.AITask{}, domain.Operation{}, err
	}
	now := s.clock.Now()
	task := domain.AITask{
		ID:           s.ids.NewID(),
		WorkspaceID:  p.WorkspaceID,
		ProductID:    cmd.ProductID,
		Kind:         cmd.Kind,
		Instructions: cmd.Instructions,
		Status:       domain.TaskPending,
		CreatedAt:    now,
		UpdatedAt:    now,
	}
	op, event, err := domain.NewJob(ctx, s.ids, p, now, domain.JobSpec{
		OperationKind: domain.OperationAITask,
		ResourceType:  ResourceType,
		ResourceID:    task.ID,
		EventType:     domain.EventAITask,
		Payload: func(opID uuid.UUID) any {
			return domain.AITaskRun{TaskID: task.ID, OperationID: opID}
		},
	})
	if err != nil {
		return domain.AITask{}, domain.Operation{}, err
	}
	task.OperationID = op.ID

	if err := tx.AITasks().Create(ctx, task); err != nil {
		return domain.AITask{}, domain.Operation{}, err
	}
	if err := tx.Operations().Create(ctx, op); err != nil {
		return domain.AITask{}, domain.Operation{}, err
	}
	if err := tx.Outbox().Append(ctx, event); err != nil {
		return domain.AITask{}, domain.Operation{}, err
	}
	return task, op, nil
}

// Get reads one AI task of the caller's workspace.
//
// Errors: CodeNotFound if the workspace has no such task.
func (s *Service) Get(ctx context.Context, p domain.Principal, id uuid.UUID) (domain.AITask, error) {
	var t domain.AITask
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		t, err = tx.AITasks().Get(ctx, id)
		return err
	})
	return t, err
}

func (c StartCommand) validate() error {
	switch {
	case c.ProductID == uuid.Nil:
		return domain.Errorf(domain.CodeValidation, "product_id is required")
	case !c.Kind.Valid():
		return domain.Errorf(domain.CodeValidation, "kind must be one of %s, %s, %s", domain.AIText, domain.AICategory, domain.AIImage)
	case !utf8.ValidString(c.Instructions):
		return domain.Errorf(domain.CodeValidation, "instructions must be UTF-8 text")
	case utf8.RuneCountInString(c.Instructions) > MaxInstructions:
		return domain.Errorf(domain.CodeValidation, "instructions must be at most %d characters", MaxInstructions)
	}
	return nil
}
