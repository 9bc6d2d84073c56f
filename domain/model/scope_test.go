package model

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
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

func TestRequireRefusesAKeyAndAMemberEachWithItsCode(t *testing.T) {
	ws := uuid.New()
	member := Principal{WorkspaceID: ws, UserID: uuid.New(), Role: RoleMember}
	key := Principal{WorkspaceID: ws, UserID: uuid.New(), Role: RoleAdmin, APIKeyID: uuid.New(), Scopes: []Scope{ScopeWebhooksRead}}
	if err := member.Require(ScopeMediaWrite); err != nil {
		t.Errorf("a member refused media:write: %v", err)
	}
	if err := key.Require(ScopeWebhooksRead); err != nil {
		t.Errorf("a webhooks:read key refused it: %v", err)
	}
	for _, c := range []struct {
		p    Principal
		s    Scope
		code domain.Code
	}{
		{member, ScopeMembersRead, domain.CodeForbidden},
		{member, ScopeWebhooksWrite, domain.CodeForbidden},
		{key, ScopeWebhooksWrite, domain.CodeInsufficientScope},
		{key, ScopeMediaRead, domain.CodeInsufficientScope},
	} {
		err := c.p.Require(c.s)
		if !domain.IsCode(err, c.code) || !strings.Contains(err.Error(), string(c.s)) {
			t.Errorf("Require(%s) = %v, want %s naming the scope", c.s, err, c.code)
		}
	}
}
