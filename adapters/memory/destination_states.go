package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DestinationStates implements ports.DestinationStates in this process:
// the embedded configuration's (one process, one worker) and the unit
// tests'. Several Gates over one of them share it as the workers of a
// fleet share the PostgreSQL or the Redis one.
type DestinationStates struct {
	mu      sync.Mutex
	records map[string]model.DestinationRecord
}

var _ ports.DestinationStates = (*DestinationStates)(nil)

// NewDestinationStates returns an empty store.
func NewDestinationStates() *DestinationStates {
	return &DestinationStates{records: map[string]model.DestinationRecord{}}
}

// Load implements ports.DestinationStates; it never fails.
func (s *DestinationStates) Load(_ context.Context, key string) (model.DestinationRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copyOf(key), nil
}

// Swap implements ports.DestinationStates; it never fails.
func (s *DestinationStates) Swap(_ context.Context, key string, version int64, state []byte) (model.DestinationRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records[key].Version != version {
		return s.copyOf(key), false, nil
	}
	s.records[key] = model.DestinationRecord{Version: version + 1, State: slices.Clone(state)}
	return s.copyOf(key), true, nil
}

// copyOf is key's record, its state a copy the caller may keep (under mu).
func (s *DestinationStates) copyOf(key string) model.DestinationRecord {
	r := s.records[key]
	r.State = slices.Clone(r.State)
	return r
}
