package model

import (
	"time"

	"github.com/google/uuid"
)

// Workspace is a tenant. Every tenant row carries its id and row-level
// security keeps workspaces apart.
type Workspace struct {
	ID        uuid.UUID
	Name      string
	CreatedAt time.Time
}

// Role is what a member may do in a workspace.
type Role string

const (
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleMember }

// Member is a user's membership of a workspace. Users themselves live in the
// identity provider that signs our tokens; we only know their ids.
type Member struct {
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	Role        Role
	CreatedAt   time.Time
}

// Principal is the authenticated caller of a request, after the membership
// check.
type Principal struct {
	WorkspaceID uuid.UUID
	// UserID is the user, or for an API key the admin who created it (so
	// what the key does is attributed to someone who may answer for it).
	UserID uuid.UUID
	Role   Role
	// APIKeyID is the API key the request came with; zero for a user's
	// token. Scopes are that key's rights (see Allows); unused for a user.
	APIKeyID uuid.UUID
	Scopes   []Scope
}
