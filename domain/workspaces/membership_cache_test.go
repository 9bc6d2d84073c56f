package workspaces_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/workspaces"
	"github.com/oncehq/once/ports"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// countingUoW counts the transactions it opens.
type countingUoW struct {
	ports.UnitOfWork
	transactions atomic.Int64
}

func (u *countingUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	u.transactions.Add(1)
	return u.UnitOfWork.Transact(ctx, ws, fn)
}

// workspace makes a workspace with an admin and a member, behind two
// services on one store: "here" caches memberships, "elsewhere" stands for
// another process.
func workspace(t *testing.T) (here, elsewhere *workspaces.Service, uow *countingUoW, admin model.Principal, member uuid.UUID) {
	t.Helper()
	db := memory.NewDB()
	clock := fixedClock{time.Unix(1_800_000_000, 0).UTC()}
	uow = &countingUoW{UnitOfWork: memory.NewUnitOfWork(db)}
	here = workspaces.NewService(uow, clock).WithMembershipCache(100, time.Hour)
	elsewhere = workspaces.NewService(memory.NewUnitOfWork(db), clock)
	ctx := context.Background()
	adminID, member := uuid.New(), uuid.New()
	ws, err := here.Create(ctx, uuid.Nil, "w", adminID)
	require.NoError(t, err)
	admin, err = here.Authorize(ctx, ws.ID, adminID)
	require.NoError(t, err)
	_, err = here.AddMember(ctx, admin, member, model.RoleMember)
	require.NoError(t, err)
	return here, elsewhere, uow, admin, member
}

func TestAuthorizeRemembersAMembership(t *testing.T) {
	here, _, uow, admin, member := workspace(t)
	ctx := context.Background()
	p, err := here.Authorize(ctx, admin.WorkspaceID, member)
	require.NoError(t, err)
	before := uow.transactions.Load()
	for range 3 {
		again, err := here.Authorize(ctx, admin.WorkspaceID, member)
		require.NoError(t, err)
		assert.Equal(t, p, again)
	}
	assert.Equal(t, before, uow.transactions.Load(), "a remembered membership was read again")
}

func TestRemovalThroughThisProcessIsSeenAtOnce(t *testing.T) {
	here, _, _, admin, member := workspace(t)
	ctx := context.Background()
	_, err := here.Authorize(ctx, admin.WorkspaceID, member)
	require.NoError(t, err)
	require.NoError(t, here.RemoveMember(ctx, admin, member))
	_, err = here.Authorize(ctx, admin.WorkspaceID, member)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
}

func TestRemovalElsewhereIsSeenOnlyAfterTheTTL(t *testing.T) {
	// The documented bound: another process's cache is not told. (No clock
	// here: the cache outlives the test, so the stale answer shows.)
	here, elsewhere, _, admin, member := workspace(t)
	ctx := context.Background()
	_, err := here.Authorize(ctx, admin.WorkspaceID, member)
	require.NoError(t, err)
	require.NoError(t, elsewhere.RemoveMember(ctx, admin, member))
	_, err = here.Authorize(ctx, admin.WorkspaceID, member)
	assert.NoError(t, err, "within the TTL another process's removal is not seen")
	_, err = elsewhere.Authorize(ctx, admin.WorkspaceID, member)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
}

func TestNonMembersAreNotRemembered(t *testing.T) {
	here, elsewhere, _, admin, _ := workspace(t)
	ctx := context.Background()
	newcomer := uuid.New()
	_, err := here.Authorize(ctx, admin.WorkspaceID, newcomer)
	require.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = elsewhere.AddMember(ctx, admin, newcomer, model.RoleMember)
	require.NoError(t, err)
	_, err = here.Authorize(ctx, admin.WorkspaceID, newcomer)
	assert.NoError(t, err)
}
