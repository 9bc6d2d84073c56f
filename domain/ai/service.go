package ai

import (
	"context"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// MaxInstructions bounds the user's prompt addition, in characters.
const MaxInstructions = 2000

// Task is an AI task as the steps every job shares see it.
var Task = jobs.TaskTable[model.AITask](kinds.AITask, ports.Repository[ports.AITaskRepository])

// Kind is the AI task (names and failure hook), listed with
// its use case and worker handler in app/kind_list.go.
var Kind = Task.Kind()

// Service starts and reads AI tasks.
type Service struct{ jobs.Starter }

func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{jobs.Starter{UOW: uow, Clock: clock, IDs: ids}}
}

// StartCommand asks for one generation for a product.
type StartCommand struct {
	ProductID    uuid.UUID
	Kind         model.AIKind
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
func (s *Service) Start(ctx context.Context, tx ports.Tx, p model.Principal, cmd StartCommand) (model.AITask, model.Operation, error) {
	if err := cmd.validate(); err != nil {
		return model.AITask{}, model.Operation{}, err
	}
	if _, err := tx.Products().Get(ctx, cmd.ProductID); err != nil {
		return model.AITask{}, model.Operation{}, err
	}
	task := model.AITask{TaskState: s.NewTask(p), ProductID: cmd.ProductID, Kind: cmd.Kind, Instructions: cmd.Instructions}
	return Task.Begin(ctx, tx, s.IDs, p, task, Route,
		func(op model.JobOperation) any { return model.AITaskRun{TaskID: task.ID, JobOperation: op} })
}

// Route is where AI tasks go: the one AI provider the service is wired to,
// its quota shared by every task; no order between them.
var Route = jobs.Route{Destination: model.Destination{System: "ai", Account: "default"}}

// Get reads one AI task of the caller's workspace.
//
// Errors: CodeNotFound if the workspace has no such task.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.AITask, error) {
	return Task.Read(ctx, s.UOW, p, id)
}

func (c StartCommand) validate() error {
	switch {
	case c.ProductID == uuid.Nil:
		return domain.Errorf(domain.CodeValidation, "product_id is required")
	case !c.Kind.Valid():
		return domain.Errorf(domain.CodeValidation, "kind must be one of %s, %s, %s", model.AIText, model.AICategory, model.AIImage)
	case !utf8.ValidString(c.Instructions):
		return domain.Errorf(domain.CodeValidation, "instructions must be UTF-8 text")
	case utf8.RuneCountInString(c.Instructions) > MaxInstructions:
		return domain.Errorf(domain.CodeValidation, "instructions must be at most %d characters", MaxInstructions)
	}
	return nil
}
