package jobs

import (
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Starter is what every use case that starts background tasks holds: the
// unit of work its reads run in, the clock that dates its new rows and the
// source of their ids. Services embed it rather than each declaring the
// three.
type Starter struct {
	UOW   ports.UnitOfWork
	Clock ports.Clock
	IDs   ports.IDGenerator
}

// NewTask is the state of a new task of p's workspace: a fresh id,
// pending, created now (then written by Table.Begin).
func (s Starter) NewTask(p model.Principal) model.TaskState {
	return model.NewTaskState(s.IDs.NewID(), p.WorkspaceID, s.Clock.Now())
}
