package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DestinationStates implements ports.DestinationStates in PostgreSQL: one
// row per destination, written by compare-and-set on its version
// (destination_states_sql.go). Each call is one statement on the pool,
// outside any transaction of a workspace.
type DestinationStates struct {
	db bun.IDB
}

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
func (s *DestinationStates) Swap(ctx context.Context, key string, version int64, state []byte) (model.DestinationRecord, bool, error) {
	var row destinationStateRow
	err := s.db.NewRaw(swapDestinationState, key, version, string(state)).Scan(ctx, &row)
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
