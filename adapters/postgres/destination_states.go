package postgres

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DestinationStates implements ports.DestinationStates in PostgreSQL: one
// row per destination, written by compare-and-set on its version
// (destination_states_sql.go). Each call is one statement on the pool,
// outside any transaction of a workspace.
type DestinationStates struct {
	db     bun.IDB
	writes atomic.Uint64
}

// Every stateSweepEvery writes, one deletes up to stateSweepBatch
// records whose keep ran out (sweepDestinationStates): the fleet's writes
// sweep the table as they go, with no process of its own to run.
const (
	stateSweepEvery = 4096
	stateSweepBatch = 500
)

var _ ports.DestinationStates = (*DestinationStates)(nil)

// NewDestinationStates keeps the records through db, connected as the
// application role.
func NewDestinationStates(db bun.IDB) *DestinationStates { return &DestinationStates{db: db} }

type destinationStateRow struct {
	Version int64  `bun:"version"`
	State   string `bun:"state"`
	Swapped bool   `bun:"swapped"`
}

// Load implements ports.DestinationStates.
func (s *DestinationStates) Load(ctx context.Context, key string) (model.DestinationRecord, error) {
	var row destinationStateRow
	err := s.db.NewRaw(loadDestinationState, key).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return model.DestinationRecord{}, nil
	}
	if err != nil {
		return model.DestinationRecord{}, err
	}
	return model.DestinationRecord{Version: row.Version, State: []byte(row.State)}, nil
}

// Swap implements ports.DestinationStates.
func (s *DestinationStates) Swap(ctx context.Context, key string, version int64, state []byte, keep time.Duration) (model.DestinationRecord, bool, error) {
	if s.writes.Add(1)%stateSweepEvery == 0 {
		// Best effort: a sweep that fails is the next one's to do.
		_, _ = s.Sweep(ctx)
	}
	keepMillis := int64(0)
	if keep > 0 {
		keepMillis = max(keep.Milliseconds(), 1)
	}
	var row destinationStateRow
	err := s.db.NewRaw(swapDestinationState, key, version, string(state), keepMillis).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		// Lost to a racer that committed after the statement began.
		current, err := s.Load(ctx, key)
		return current, false, err
	}
	if err != nil {
		return model.DestinationRecord{}, false, err
	}
	return model.DestinationRecord{Version: row.Version, State: []byte(row.State)}, row.Swapped, nil
}

// Sweep deletes a batch of the records whose keep ran out; it says how
// many.
func (s *DestinationStates) Sweep(ctx context.Context) (int, error) {
	var keys []string
	if err := s.db.NewRaw(sweepDestinationStates, stateSweepBatch).Scan(ctx, &keys); err != nil {
		return 0, err
	}
	return len(keys), nil
}
