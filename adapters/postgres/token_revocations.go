package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// TokenRevocations implements ports.TokenRevocations in PostgreSQL
// (token_revocations_sql.go): each call one statement on the pool. Its
// cursor is a time of the database (Unix microseconds), so the clocks of
// the processes do not matter.
type TokenRevocations struct {
	db bun.IDB
}

var _ ports.TokenRevocations = (*TokenRevocations)(nil)

// NewTokenRevocations keeps the revocations through db, connected as the
// application role.
func NewTokenRevocations(db bun.IDB) *TokenRevocations { return &TokenRevocations{db: db} }

// RevokeToken implements ports.TokenRevocations.
func (s *TokenRevocations) RevokeToken(ctx context.Context, t model.RevokedToken) error {
	_, err := s.db.NewRaw(revokeToken, t.ID, t.ExpiresAt).Exec(ctx)
	return err
}

// RevokeTokensBefore implements ports.TokenRevocations.
func (s *TokenRevocations) RevokeTokensBefore(ctx context.Context, c model.TokenCutoff) error {
	_, err := s.db.NewRaw(revokeTokensBefore, cutoffSubject(c.WorkspaceID, c.UserID), c.NotBefore).Exec(ctx)
	return err
}

type revocationRow struct {
	Kind string    `bun:"kind"`
	ID   string    `bun:"id"`
	At   time.Time `bun:"at"`
}

// Changes implements ports.TokenRevocations.
func (s *TokenRevocations) Changes(ctx context.Context, since int64) (model.Revocations, int64, error) {
	var rows []revocationRow
	if err := s.db.NewRaw(revocationChanges, time.UnixMicro(since)).Scan(ctx, &rows); err != nil {
		return model.Revocations{}, since, err
	}
	var out model.Revocations
	next := since
	for _, r := range rows {
		switch r.Kind {
		case "token":
			out.Tokens = append(out.Tokens, model.RevokedToken{ID: r.ID, ExpiresAt: r.At})
		case "cutoff":
			ws, user, err := parseCutoffSubject(r.ID)
			if err != nil {
				return model.Revocations{}, since, err
			}
			out.Cutoffs = append(out.Cutoffs, model.TokenCutoff{WorkspaceID: ws, UserID: user, NotBefore: r.At})
		case "cursor":
			next = max(since, r.At.UnixMicro())
		}
	}
	return out, next, nil
}

// SweepExpired implements ports.TokenRevocations.
func (s *TokenRevocations) SweepExpired(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := s.db.NewRaw(sweepRevokedTokens, before, limit).Exec(ctx)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// cutoffSubject is a cutoff's key: "<workspace id>/<user id>".
func cutoffSubject(ws, user uuid.UUID) string { return ws.String() + "/" + user.String() }

func parseCutoffSubject(s string) (ws, user uuid.UUID, err error) {
	a, b, _ := strings.Cut(s, "/")
	if ws, err = uuid.Parse(a); err == nil {
		user, err = uuid.Parse(b)
	}
	if err != nil {
		return uuid.Nil, uuid.Nil, fmt.Errorf("token cutoff %q: %w", s, err)
	}
	return ws, user, nil
}
