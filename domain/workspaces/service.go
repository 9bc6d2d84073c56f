// Package workspaces holds the use cases of tenants and their members:
// creating a workspace and deciding whether a caller belongs to one.
package workspaces

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Service creates workspaces and authorizes callers.
type Service struct {
	uow     ports.UnitOfWork
	clock   ports.Clock
	members *membershipCache
	// lookups shares one membership read among the requests that miss
	// the cache at once.
	lookups singleflight.Group
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
	if role, ok := s.members.get(workspace, user, s.clock.Now()); ok {
		return model.Principal{WorkspaceID: workspace, UserID: user, Role: role}, nil
	}
	gen := s.members.snapshot()
	// One read for all the requests of a member that miss at once: a
	// storm from one client with a cold (or just expired) cache would
	// otherwise take the whole pool before any limit of its workspace
	// applies. The generation is in the key, so a request that comes
	// after a membership changed here never shares a read begun before.
	// The read is the group's, not the first caller's: its client leaving
	// does not fail the others.
	key := fmt.Sprintf("%s/%s/%d", workspace, user, gen)
	read := s.lookups.DoChan(key, func() (any, error) {
		read := s.clock.Now()
		if role, ok := s.members.get(workspace, user, read); ok { // put by a read that just ended
			return role, nil
		}
		m, err := ports.Query(context.WithoutCancel(ctx), s.uow, workspace, func(ctx context.Context, tx ports.Tx) (model.Member, error) {
			return tx.Members().Get(ctx, user)
		})
		if err != nil {
			return model.Role(""), err
		}
		s.members.put(gen, workspace, user, m.Role, read)
		return m.Role, nil
	})
	var res singleflight.Result
	select {
	case res = <-read:
	case <-ctx.Done():
		return model.Principal{}, domain.Wrap(domain.CodeUnavailable, context.Cause(ctx), "the request ended while its membership was read")
	}
	if domain.IsCode(res.Err, domain.CodeNotFound) {
		return model.Principal{}, domain.Errorf(domain.CodeForbidden, "you are not a member of this workspace")
	}
	if res.Err != nil {
		return model.Principal{}, res.Err
	}
	return model.Principal{WorkspaceID: workspace, UserID: user, Role: res.Val.(model.Role)}, nil
}
