package memory

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// TokenRevocations implements ports.TokenRevocations in this process: the
// embedded configuration's and the unit tests'. Its cursor is a count of
// the writes, each record carrying the count at its last write.
type TokenRevocations struct {
	mu      sync.Mutex
	writes  int64
	tokens  map[string]revokedToken
	cutoffs map[[2]uuid.UUID]tokenCutoff
}

type revokedToken struct {
	model.RevokedToken
	written int64
}

type tokenCutoff struct {
	model.TokenCutoff
	written int64
}

var _ ports.TokenRevocations = (*TokenRevocations)(nil)

// NewTokenRevocations returns an empty store.
func NewTokenRevocations() *TokenRevocations {
	return &TokenRevocations{tokens: map[string]revokedToken{}, cutoffs: map[[2]uuid.UUID]tokenCutoff{}}
}

// RevokeToken implements ports.TokenRevocations; it never fails.
func (s *TokenRevocations) RevokeToken(_ context.Context, t model.RevokedToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[t.ID]; ok {
		return nil
	}
	s.writes++
	s.tokens[t.ID] = revokedToken{RevokedToken: t, written: s.writes}
	return nil
}

// RevokeTokensBefore implements ports.TokenRevocations; it never fails.
func (s *TokenRevocations) RevokeTokensBefore(_ context.Context, c model.TokenCutoff) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := [2]uuid.UUID{c.WorkspaceID, c.UserID}
	if old, ok := s.cutoffs[key]; ok && !old.NotBefore.Before(c.NotBefore) {
		return nil
	}
	s.writes++
	s.cutoffs[key] = tokenCutoff{TokenCutoff: c, written: s.writes}
	return nil
}

// Changes implements ports.TokenRevocations; it never fails.
func (s *TokenRevocations) Changes(_ context.Context, since int64) (model.Revocations, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out model.Revocations
	for _, t := range s.tokens {
		if t.written > since {
			out.Tokens = append(out.Tokens, t.RevokedToken)
		}
	}
	for _, c := range s.cutoffs {
		if c.written > since {
			out.Cutoffs = append(out.Cutoffs, c.TokenCutoff)
		}
	}
	return out, s.writes, nil
}

// SweepExpired implements ports.TokenRevocations; it never fails.
func (s *TokenRevocations) SweepExpired(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, t := range s.tokens {
		if n >= limit {
			break
		}
		if t.ExpiresAt.Before(before) {
			delete(s.tokens, id)
			n++
		}
	}
	return n, nil
}
