package memory

import (
	"context"
	"sync"
	"time"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// OperatorSessions implements ports.OperatorSessions in this process: the
// embedded configuration's, whose one process is the whole deployment.
type OperatorSessions struct {
	mu       sync.Mutex
	sessions map[string]model.OperatorSession
}

var _ ports.OperatorSessions = (*OperatorSessions)(nil)

// NewOperatorSessions returns an empty store.
func NewOperatorSessions() *OperatorSessions {
	return &OperatorSessions{sessions: map[string]model.OperatorSession{}}
}

// Create implements ports.OperatorSessions; it never fails.
func (s *OperatorSessions) Create(_ context.Context, session model.OperatorSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, old := range s.sessions {
		if !old.LiveAt(session.CreatedAt) {
			delete(s.sessions, id)
		}
	}
	s.sessions[session.ID] = session
	return nil
}

// Get implements ports.OperatorSessions; it never fails.
func (s *OperatorSessions) Get(_ context.Context, id string, now time.Time) (model.OperatorSession, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	session, ok := s.sessions[id]
	if !ok || !session.LiveAt(now) {
		return model.OperatorSession{}, false, nil
	}
	return session, true, nil
}

// Revoke implements ports.OperatorSessions; it never fails.
func (s *OperatorSessions) Revoke(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, id)
	return nil
}

// RevokeOperator implements ports.OperatorSessions; it never fails.
func (s *OperatorSessions) RevokeOperator(_ context.Context, operator string, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := 0
	for id, session := range s.sessions {
		if session.Operator == operator {
			if session.LiveAt(now) {
				live++
			}
			delete(s.sessions, id)
		}
	}
	return live, nil
}
