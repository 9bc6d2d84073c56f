// Package workspaces holds the use cases of tenants and their members:
// creating a workspace and deciding whether a caller belongs to one.
package workspaces

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Service creates workspaces and authorizes callers.
type Service struct {
	uow     ports.UnitOfWork
	clock   ports.Clock
	members *membershipCache
}

func NewService(uow ports.UnitOfWork, clock ports.Clock) *Service {
	return &Service{uow: uow, clock: clock}
}

// WithMembershipCache makes Authorize remember a membership for up to ttl
// (at most size of them). A change made through this Service is seen at
// once; one made through another process within ttl. Zero disables it.
func (s *Service) WithMembershipCache(size int, ttl time.Duration) *Service {
	s.members = newMembershipCache(size, ttl)
	return s
}

// Create makes a workspace with admin as its first member. id may be
// uuid.Nil to let the service choose one.
func (s *Service) Create(ctx context.Context, id uuid.UUID, name string, admin uuid.UUID) (model.Workspace, error) {
	if strings.TrimSpace(name) == "" {
		return model.Workspace{}, domain.Errorf(domain.CodeValidation, "workspace name must not be empty")
	}
	if id == uuid.Nil {
		id = uuid.New()
	}
	now := s.clock.Now()
	ws := model.Workspace{ID: id, Name: strings.TrimSpace(name), CreatedAt: now}
	err := s.uow.Transact(ctx, id, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Workspaces().Create(ctx, ws); err != nil {
			return err
		}
		return tx.Members().Add(ctx, model.Member{WorkspaceID: id, UserID: admin, Role: model.RoleAdmin, CreatedAt: now})
	})
	return ws, err
}

// EnsureMember adds user to the workspace unless already a member. Used to
// seed the embedded demo and by operators.
func (s *Service) EnsureMember(ctx context.Context, workspace, user uuid.UUID, role model.Role) error {
	return s.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		if _, err := tx.Members().Get(ctx, user); err == nil {
			return nil
		} else if !domain.IsCode(err, domain.CodeNotFound) {
			return err
		}
		return tx.Members().Add(ctx, model.Member{WorkspaceID: workspace, UserID: user, Role: role, CreatedAt: s.clock.Now()})
	})
}

// Authorize turns verified token claims into a Principal, or CodeForbidden
// when the user is not a member of the workspace. A workspace that does not
// exist looks the same as one the user is not in.
func (s *Service) Authorize(ctx context.Context, workspace, user uuid.UUID) (model.Principal, error) {
	if role, ok := s.members.get(workspace, user); ok {
		return model.Principal{WorkspaceID: workspace, UserID: user, Role: role}, nil
	}
	gen := s.members.snapshot()
	m, err := ports.Query(ctx, s.uow, workspace, func(ctx context.Context, tx ports.Tx) (model.Member, error) {
		return tx.Members().Get(ctx, user)
	})
	if domain.IsCode(err, domain.CodeNotFound) {
		return model.Principal{}, domain.Errorf(domain.CodeForbidden, "you are not a member of this workspace")
	}
	if err != nil {
		return model.Principal{}, err
	}
	s.members.put(gen, workspace, user, m.Role)
	return model.Principal{WorkspaceID: workspace, UserID: user, Role: m.Role}, nil
}
