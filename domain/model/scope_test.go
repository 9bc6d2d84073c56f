package model

import (
	"testing"

	"github.com/google/uuid"
)

func TestAMemberHasEveryScopeButTheAdminOnesAndAKeyOnlyItsOwn(t *testing.T) {
	member := Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: RoleMember}
	admin := Principal{WorkspaceID: member.WorkspaceID, UserID: uuid.New(), Role: RoleAdmin}
	for _, s := range AllScopes {
		if !admin.Allows(s) {
			t.Errorf("an admin is refused %s", s)
		}
		if member.Allows(s) == contains(adminOnlyScopes, s) {
			t.Errorf("member.Allows(%s) = %v", s, member.Allows(s))
		}
	}
	key := Principal{WorkspaceID: admin.WorkspaceID, UserID: admin.UserID, Role: RoleAdmin, APIKeyID: uuid.New(), Scopes: []Scope{ScopeMediaRead}}
	if !key.Allows(ScopeMediaRead) || key.Allows(ScopeMediaWrite) {
		t.Errorf("a media:read key: read %v, write %v", key.Allows(ScopeMediaRead), key.Allows(ScopeMediaWrite))
	}
	if Scope("media:admin").Valid() || !ScopeKeysWrite.Valid() || ScopeKeysWrite.Family() != "keys" {
		t.Error("Valid or Family wrong")
	}
}

func contains(ss []Scope, s Scope) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
