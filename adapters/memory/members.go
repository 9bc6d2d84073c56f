package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type memberRepo struct{ t *tx }

var _ ports.MemberRepository = memberRepo{}

func memberUniqueKey(k memberKey) uniqueKey {
	return uniqueKey{"members_pkey", k.workspace.String() + "/" + k.user.String()}
}

func (r memberRepo) Add(_ context.Context, m domain.Member) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if err := t.ownWorkspace("member", m.WorkspaceID); err != nil {
		return err
	}
	k := memberKey{m.WorkspaceID, m.UserID}
	if !t.db.reserveLocked(t, memberUniqueKey(k)) {
		return domain.Errorf(domain.CodeConflict, "user %s is already a member", m.UserID)
	}
	t.members[k] = copyMember(m)
	return nil
}

func (r memberRepo) Get(_ context.Context, user uuid.UUID) (domain.Member, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return domain.Member{}, err
	}
	defer t.db.mu.Unlock()
	k := memberKey{t.workspace, user}
	if m, ok := t.members[k]; ok {
		return copyMember(m), nil
	}
	if m, ok := t.db.members[k]; ok {
		return copyMember(m), nil
	}
	return domain.Member{}, domain.Errorf(domain.CodeNotFound, "user %s is not a member of this workspace", user)
}
