package model

import (
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// Scope is one right over one family of resources: "<family>:read" or
// "<family>:write". A write scope does not imply its read: a key that may
// only create media cannot list them unless it holds media:read too, as
// Stripe's restricted keys give per resource.
type Scope string

// The scopes, one read/write pair per resource family. A route needs
// exactly one of them (the HTTP adapter's route table says which).
const (
	ScopeStoresRead      Scope = "stores:read"  // stores, their authorization and verifications
	ScopeStoresWrite     Scope = "stores:write" // create, verify, replace credentials
	ScopeSyncsRead       Scope = "syncs:read"
	ScopeSyncsWrite      Scope = "syncs:write"
	ScopeMediaRead       Scope = "media:read" // media and material transfers
	ScopeMediaWrite      Scope = "media:write"
	ScopeProductsRead    Scope = "products:read" // products and their publications
	ScopeProductsWrite   Scope = "products:write"
	ScopeAIRead          Scope = "ai:read"
	ScopeAIWrite         Scope = "ai:write" // spends the workspace's AI budget
	ScopeOperationsRead  Scope = "operations:read"
	ScopeOperationsWrite Scope = "operations:write" // cancel
	ScopeWebhooksRead    Scope = "webhooks:read"
	ScopeWebhooksWrite   Scope = "webhooks:write"
	ScopeMembersRead     Scope = "members:read"
	ScopeMembersWrite    Scope = "members:write"
	ScopeKeysRead        Scope = "keys:read"
	ScopeKeysWrite       Scope = "keys:write"
	ScopeOutboxRead      Scope = "outbox:read" // dead letters
	ScopeOutboxWrite     Scope = "outbox:write"
)

// AllScopes lists every scope, in the order documentation shows them.
var AllScopes = []Scope{
	ScopeStoresRead, ScopeStoresWrite,
	ScopeSyncsRead, ScopeSyncsWrite,
	ScopeMediaRead, ScopeMediaWrite,
	ScopeProductsRead, ScopeProductsWrite,
	ScopeAIRead, ScopeAIWrite,
	ScopeOperationsRead, ScopeOperationsWrite,
	ScopeWebhooksRead, ScopeWebhooksWrite,
	ScopeMembersRead, ScopeMembersWrite,
	ScopeKeysRead, ScopeKeysWrite,
	ScopeOutboxRead, ScopeOutboxWrite,
}

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return slices.Contains(AllScopes, s) }

// Family is the resource family s is about ("stores" for "stores:read").
func (s Scope) Family() string {
	family, _, _ := strings.Cut(string(s), ":")
	return family
}

// adminOnlyScopes are the rights a member (not an admin) never has: who is
// in the workspace (listing its members included, admin-only since members
// exist), its machine keys, where its events go and redriving its dead
// letters.
var adminOnlyScopes = []Scope{
	ScopeMembersRead, ScopeMembersWrite,
	ScopeKeysRead, ScopeKeysWrite,
	ScopeWebhooksRead, ScopeWebhooksWrite,
	ScopeOutboxRead, ScopeOutboxWrite,
}

// RoleScopes is what a member with role r may do: an admin everything, a
// member everything but the admin-only scopes, an unknown role nothing.
func RoleScopes(r Role) []Scope {
	switch r {
	case RoleAdmin:
		return slices.Clone(AllScopes)
	case RoleMember:
		out := make([]Scope, 0, len(AllScopes))
		for _, s := range AllScopes {
			if !slices.Contains(adminOnlyScopes, s) {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Allows reports whether the caller may act with scope s. A user (APIKeyID
// zero) has its role's scopes; an API key has exactly the scopes it was
// created with, and never more than its creator's role allowed then.
func (p Principal) Allows(s Scope) bool {
	if p.APIKeyID == uuid.Nil {
		return slices.Contains(RoleScopes(p.Role), s)
	}
	return slices.Contains(p.Scopes, s)
}

// Require is nil when p Allows s, and otherwise the refusal: for an API key
// domain.CodeInsufficientScope, for a user whose role lacks s (a member on
// an admin-only scope) domain.CodeForbidden, as before scopes existed.
// Both name the scope needed.
func (p Principal) Require(s Scope) error {
	switch {
	case p.Allows(s):
		return nil
	case p.APIKeyID != uuid.Nil:
		return domain.Errorf(domain.CodeInsufficientScope, "this API key lacks the %s scope", s)
	default:
		return domain.Errorf(domain.CodeForbidden, "workspace admins only: this needs the %s scope, which the %s role does not have", s, p.Role)
	}
}
