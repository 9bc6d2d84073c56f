package workspaces

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/ports"
)

// AddMember makes user a member of p's workspace with role. Needs
// members:write (admins; Principal.Require says why not). Errors: CodeValidation for a nil user or an unknown role, CodeConflict
// with ResourceID = the user if already a member.
func (s *Service) AddMember(ctx context.Context, p model.Principal, user uuid.UUID, role model.Role) (model.Member, error) {
	if err := p.Require(model.ScopeMembersWrite); err != nil {
		return model.Member{}, err
	}
	switch {
	case user == uuid.Nil:
		return model.Member{}, domain.Errorf(domain.CodeValidation, "user_id must be a non-nil UUID")
	case !role.Valid():
		return model.Member{}, domain.Errorf(domain.CodeValidation, "role must be admin or member")
	}
	m := model.Member{WorkspaceID: p.WorkspaceID, UserID: user, Role: role, CreatedAt: s.clock.Now()}
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		if _, err := tx.Members().Get(ctx, user); err == nil {
			e := domain.Errorf(domain.CodeConflict, "user %s is already a member of this workspace", user)
			e.ResourceID = user.String()
			return e
		} else if !domain.IsCode(err, domain.CodeNotFound) {
			return err
		}
		return tx.Members().Add(ctx, m)
	})
	return m, err
}

// ListMembers returns a page of the members of p's workspace, in user id
// order, paged like every list (q's limit and cursor; its filters do not
// apply). Needs members:read (admins).
func (s *Service) ListMembers(ctx context.Context, p model.Principal, q ports.ListQuery) (pagination.Page[model.Member], error) {
	if err := p.Require(model.ScopeMembersRead); err != nil {
		return pagination.Page[model.Member]{}, err
	}
	return pagination.List(ctx, pagination.NewService(s.uow), p, q, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Member, error) {
		return tx.Members().List
	})
}

// RemoveMember removes user from p's workspace. Needs members:write
// (admins); the last admin cannot be removed (CodeInvalidState), so a
// workspace always has one.
func (s *Service) RemoveMember(ctx context.Context, p model.Principal, user uuid.UUID) error {
	if err := p.Require(model.ScopeMembersWrite); err != nil {
		return err
	}
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Members().Remove(ctx, user) // refuses the last admin, race-free
	})
	// After the commit (or a failure that may have committed): this
	// process sees the removal at once.
	s.members.forget(p.WorkspaceID, user)
	return err
}
