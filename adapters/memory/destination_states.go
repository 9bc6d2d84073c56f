package memory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DestinationStates implements ports.DestinationStates in this process:
// the embedded configuration's (one process, one worker) and the unit
// tests'. Several Gates over one of them share it as the workers of a
// fleet share the PostgreSQL or the Redis one.
type DestinationStates struct {
	mu      sync.Mutex
	records map[string]kept
	now     func() time.Time
	writes  int
}

// kept is a record and when its keep runs out (zero: never).
type kept struct {
	model.DestinationRecord
	until time.Time
}

// stateSweepEvery is how many writes go between two sweeps of the records
// whose keep ran out: a record is forgotten when it is next read or
// written, or at the next sweep, whichever comes first.
const stateSweepEvery = 1024

var _ ports.DestinationStates = (*DestinationStates)(nil)

// NewDestinationStates returns an empty store, telling time by the
// system's clock (the keep of a record is the store's, not a Gate's).
func NewDestinationStates() *DestinationStates {
	return &DestinationStates{records: map[string]kept{}, now: time.Now}
}

// Load implements ports.DestinationStates; it never fails.
func (s *DestinationStates) Load(_ context.Context, key string) (model.DestinationRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copyOf(key, s.now()), nil
}

// Swap implements ports.DestinationStates; it never fails.
func (s *DestinationStates) Swap(_ context.Context, key string, version int64, state []byte, keep time.Duration) (model.DestinationRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.writes++; s.writes%stateSweepEvery == 0 {
		s.sweep(now)
	}
	if current := s.copyOf(key, now); current.Version != version {
		return current, false, nil
	}
	k := kept{DestinationRecord: model.DestinationRecord{Version: version + 1, State: slices.Clone(state)}}
	if keep > 0 {
		k.until = now.Add(keep)
	}
	s.records[key] = k
	return s.copyOf(key, now), true, nil
}

// Sweep forgets every record whose keep ran out; it says how many.
func (s *DestinationStates) Sweep(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sweep(s.now()), nil
}

// sweep is Sweep under mu.
func (s *DestinationStates) sweep(now time.Time) int {
	n := 0
	for key, k := range s.records {
		if k.over(now) {
			delete(s.records, key)
			n++
		}
	}
	return n
}

func (k kept) over(now time.Time) bool { return !k.until.IsZero() && !now.Before(k.until) }

// copyOf is key's record, its state a copy the caller may keep, and
// nothing once its keep ran out (under mu).
func (s *DestinationStates) copyOf(key string, now time.Time) model.DestinationRecord {
	k, ok := s.records[key]
	if ok && k.over(now) {
		delete(s.records, key)
		return model.DestinationRecord{}
	}
	r := k.DestinationRecord
	r.State = slices.Clone(r.State)
	return r
}
