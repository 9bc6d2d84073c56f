package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// OperatorSessions implements ports.OperatorSessions in PostgreSQL
// (sql/029_operator_sessions.sql): one row per live session, each call one
// statement on the pool, outside any workspace's transaction.
type OperatorSessions struct {
	db bun.IDB
}

var _ ports.OperatorSessions = (*OperatorSessions)(nil)

// NewOperatorSessions keeps the sessions through db, connected as the
// application role.
func NewOperatorSessions(db bun.IDB) *OperatorSessions { return &OperatorSessions{db: db} }

// createOperatorSession drops the sessions expired at ?3 (there are few:
// a login per operator per day) and records the new one, in one statement.
const createOperatorSession = `
WITH expired AS (DELETE FROM operator_sessions WHERE expires_at <= ?3)
INSERT INTO operator_sessions (id, operator, credential, created_at, expires_at)
VALUES (?0, ?1, ?2, ?3, ?4)`

// Create implements ports.OperatorSessions.
func (s *OperatorSessions) Create(ctx context.Context, session model.OperatorSession) error {
	_, err := s.db.NewRaw(createOperatorSession, session.ID, session.Operator, session.Credential, session.CreatedAt, session.ExpiresAt).Exec(ctx)
	return err
}

type operatorSessionRow struct {
	ID         string    `bun:"id"`
	Operator   string    `bun:"operator"`
	Credential string    `bun:"credential"`
	CreatedAt  time.Time `bun:"created_at"`
	ExpiresAt  time.Time `bun:"expires_at"`
}

// Get implements ports.OperatorSessions.
func (s *OperatorSessions) Get(ctx context.Context, id string, now time.Time) (model.OperatorSession, bool, error) {
	var row operatorSessionRow
	err := s.db.NewRaw(`SELECT id, operator, credential, created_at, expires_at FROM operator_sessions WHERE id = ? AND expires_at > ?`, id, now).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return model.OperatorSession{}, false, nil
	}
	if err != nil {
		return model.OperatorSession{}, false, err
	}
	return model.OperatorSession(row), true, nil
}

// Revoke implements ports.OperatorSessions.
func (s *OperatorSessions) Revoke(ctx context.Context, id string) error {
	_, err := s.db.NewRaw(`DELETE FROM operator_sessions WHERE id = ?`, id).Exec(ctx)
	return err
}

// RevokeOperator implements ports.OperatorSessions.
func (s *OperatorSessions) RevokeOperator(ctx context.Context, operator string, now time.Time) (int, error) {
	var live int
	err := s.db.NewRaw(`
WITH gone AS (DELETE FROM operator_sessions WHERE operator = ? RETURNING expires_at)
SELECT count(*) FILTER (WHERE expires_at > ?) FROM gone`, operator, now).Scan(ctx, &live)
	return live, err
}
