package model

import (
	"time"

	"github.com/google/uuid"
)

// APIKey is a workspace's credential for a machine client (an ERP, a
// script): its rights are its Scopes, never more than its creator's role
// allowed when it was made. The secret itself is never stored: only a
// keyed hash of it (HMAC-SHA256 under Hash.KeyID of the deployment's
// keyring), so a copy of the table does not let anyone in.
type APIKey struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	// LookupID is the short public part of the secret that finds the key
	// before its workspace is known (unique across workspaces).
	LookupID string
	Name     string
	Scopes   []Scope
	// CreatedBy is the admin who made it, whom the key acts as; Role is
	// that admin's role then.
	CreatedBy uuid.UUID
	Role      Role
	// HashKeyID names the keyring key the secret was hashed under; Hash
	// is HMAC-SHA256 of the whole secret under that key (derived).
	HashKeyID string
	Hash      []byte
	CreatedAt time.Time
	// LastUsedAt is when the key last authenticated a request, to a
	// minute (zero: never); RevokedAt when it was revoked (zero: live).
	LastUsedAt time.Time
	RevokedAt  time.Time
}

// Revoked reports whether the key was revoked.
func (k APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }
