package ports

import (
	"context"
	"time"

	"github.com/oncehq/once/domain/model"
)

// OperatorSessions keeps the operator console's sessions for every process
// of a deployment (serve, dispatch and work each serve the console on
// their ops listener): a session made through one is good in all, and one
// ended through one (a logout, a revocation of all of an operator's
// sessions) is refused by all from then on. Sessions are few (a login per
// operator per day) and read once per console request.
//
// An error means the store could not be asked: nothing was written, and
// the caller refuses the request (a session that cannot be checked is
// not taken on trust).
type OperatorSessions interface {
	// Create records s; sessions expired at s.CreatedAt may be dropped at
	// the same time.
	Create(ctx context.Context, s model.OperatorSession) error
	// Get is the session id, ok false when there is none: never made,
	// revoked, or expired at now.
	Get(ctx context.Context, id string, now time.Time) (s model.OperatorSession, ok bool, err error)
	// Revoke ends the session id; one that does not exist is no error.
	Revoke(ctx context.Context, id string) error
	// RevokeOperator ends every session of operator and says how many of
	// them were live at now.
	RevokeOperator(ctx context.Context, operator string, now time.Time) (int, error)
}
