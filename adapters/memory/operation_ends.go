package memory

import (
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// operationEnds is the in-process ports.OperationEnds of a Signal: Ended
// tells the listener at once, in the caller's goroutine (the listener
// does not block).
type operationEnds struct {
	listener atomic.Pointer[ports.OperationEndListener]
}

var _ ports.OperationEnds = (*Signal)(nil)

// Ended implements ports.OperationEnds.
func (s *Signal) Ended(ids ...uuid.UUID) {
	if l := s.ends.listener.Load(); l != nil {
		(*l).Heard(ids)
	}
}

// Listen implements ports.OperationEnds. Nothing is lost in one process,
// but the port promises a Missed when hearing starts.
func (s *Signal) Listen(l ports.OperationEndListener) {
	s.ends.listener.Store(&l)
	l.Missed()
}
