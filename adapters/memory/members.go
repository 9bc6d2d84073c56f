package memory

import (
	"bytes"
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type memberRepo struct{ t *tx }

var _ ports.MemberRepository = memberRepo{}

func memberUniqueKey(k memberKey) uniqueKey {
	return uniqueKey{"members_pkey", k.workspace.String() + "/" + k.user.String()}
}

func (r memberRepo) Add(_ context.Context, m model.Member) error {
	t := r.t
	if err := t.lockOwn("member", m.WorkspaceID); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	k := memberKey{m.WorkspaceID, m.UserID}
	if !t.db.reserveLocked(t, memberUniqueKey(k)) {
		return domain.Errorf(domain.CodeConflict, "user %s is already a member", m.UserID)
	}
	t.members[k] = copyMember(m)
	return nil
}

func (r memberRepo) Get(_ context.Context, user uuid.UUID) (model.Member, error) {
	t := r.t
	return inLock(t, func() (model.Member, error) {
		k := memberKey{t.workspace, user}
		if m, ok := t.members[k]; ok {
			return copyMember(m), nil
		}
		if m, ok := t.db.members[k]; ok && !t.memberDeletes[k] {
			return copyMember(m), nil
		}
		return model.Member{}, domain.Errorf(domain.CodeNotFound, "user %s is not a member of this workspace", user)
	})
}

func (r memberRepo) List(_ context.Context, q ports.ListQuery) ([]model.Member, error) {
	t := r.t
	return inLock(t, func() ([]model.Member, error) {
		var out []model.Member
		for k, m := range t.db.members {
			if _, own := t.members[k]; !own && k.workspace == t.workspace && !t.memberDeletes[k] {
				out = append(out, copyMember(m))
			}
		}
		for k, m := range t.members {
			if k.workspace == t.workspace {
				out = append(out, copyMember(m))
			}
		}
		out = slices.DeleteFunc(out, func(m model.Member) bool { return bytes.Compare(m.UserID[:], q.StartingAfter[:]) <= 0 })
		slices.SortFunc(out, func(a, b model.Member) int { return bytes.Compare(a.UserID[:], b.UserID[:]) })
		if len(out) > max(q.Limit, 0) {
			out = out[:max(q.Limit, 0)]
		}
		return out, nil
	})
}

func (r memberRepo) Remove(_ context.Context, user uuid.UUID) error {
	t := r.t
	return t.inLock(func() error {
		k := memberKey{t.workspace, user}
		_, own := t.members[k]
		_, committed := t.db.members[k]
		if current, ok := r.visibleLocked(k); ok && current.Role == model.RoleAdmin {
			// Like the admin rows PostgreSQL locks: one admin removal at a time.
			if !t.db.lockRowLocked(t, uniqueKey{"workspace_admins", t.workspace.String()}) {
				return domain.Errorf(domain.CodeInvalidState, "the workspace's admins are being changed by a concurrent request")
			}
			if r.adminsLocked() <= 1 {
				return domain.Errorf(domain.CodeInvalidState, "the last admin of a workspace cannot be removed")
			}
		}
		switch {
		case own:
			delete(t.members, k)
			if committed {
				t.memberDeletes[k] = true
			}
		case committed && !t.memberDeletes[k]:
			t.memberDeletes[k] = true
		default:
			return domain.Errorf(domain.CodeNotFound, "user %s is not a member of this workspace", user)
		}
		t.db.releaseLocked(t, memberUniqueKey(k))
		return nil
	})
}

// visibleLocked is the membership t sees for k.
func (r memberRepo) visibleLocked(k memberKey) (model.Member, bool) {
	t := r.t
	if m, ok := t.members[k]; ok {
		return m, true
	}
	m, ok := t.db.members[k]
	return m, ok && !t.memberDeletes[k]
}

// adminsLocked counts the admins of t's workspace that t sees.
func (r memberRepo) adminsLocked() int {
	t := r.t
	n := 0
	for k := range t.db.members {
		if _, own := t.members[k]; !own && k.workspace == t.workspace {
			if m, ok := r.visibleLocked(k); ok && m.Role == model.RoleAdmin {
				n++
			}
		}
	}
	for k, m := range t.members {
		if k.workspace == t.workspace && m.Role == model.RoleAdmin {
			n++
		}
	}
	return n
}
