package model

import (
	"time"

	"github.com/google/uuid"
)

// AccessToken is what a verified bearer token says of itself, as far as
// revocation needs it.
type AccessToken struct {
	// ID names the token for revocation: "jti:" and its jti claim, or for
	// a token without one "sha256:" and the hex SHA-256 of its text (so
	// it can be revoked too). Never the token itself.
	ID          string
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	// IssuedAt is its iat claim; zero when it has none (such a token is
	// refused once its user's tokens are revoked: it cannot show it is
	// newer).
	IssuedAt time.Time
	// ExpiresAt is the last instant it is accepted: its exp plus the
	// verifier's leeway.
	ExpiresAt time.Time
}

// RevokedToken is one token refused before its expiry (a logout), named
// by its ID alone: the check needs no more. Its record may go once
// ExpiresAt has passed: the token is refused anyway.
type RevokedToken struct {
	ID        string
	ExpiresAt time.Time
}

// TokenCutoff refuses every token of a user in a workspace issued before
// NotBefore ("sign out everywhere"). NotBefore is a whole second, as iat
// is.
type TokenCutoff struct {
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	NotBefore   time.Time
}

// Revocations are revoked tokens and cutoffs, as a store hands them over.
type Revocations struct {
	Tokens  []RevokedToken
	Cutoffs []TokenCutoff
}
