package workspaces_test

import (
	"context"
	"sync"
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

// heldUoW holds its first transaction until release is closed, and
// counts them all.
type heldUoW struct {
	ports.UnitOfWork
	release      chan struct{}
	transactions atomic.Int64
}

func (u *heldUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	if u.transactions.Add(1) == 1 {
		<-u.release
	}
	return u.UnitOfWork.Transact(ctx, ws, fn)
}

// heldMembers is a workspace with an admin and a member on a fresh store,
// and a service with a cold cache whose first read is held.
func heldMembers(t *testing.T) (*workspaces.Service, *heldUoW, model.Principal, uuid.UUID) {
	t.Helper()
	db := memory.NewDB()
	clock := fixedClock{time.Unix(1_800_000_000, 0).UTC()}
	setup := workspaces.NewService(memory.NewUnitOfWork(db), clock)
	ctx := context.Background()
	adminID, member := uuid.New(), uuid.New()
	ws, err := setup.Create(ctx, uuid.Nil, "w", adminID)
	require.NoError(t, err)
	admin, err := setup.Authorize(ctx, ws.ID, adminID)
	require.NoError(t, err)
	_, err = setup.AddMember(ctx, admin, member, model.RoleMember)
	require.NoError(t, err)
	uow := &heldUoW{UnitOfWork: memory.NewUnitOfWork(db), release: make(chan struct{})}
	return workspaces.NewService(uow, clock).WithMembershipCache(100, time.Hour), uow, admin, member
}

// The requests of one member that miss the cache at once share one read:
// a storm from one client cannot take the pool before its workspace's
// limits apply.
func TestConcurrentMissesOfOneMemberShareOneRead(t *testing.T) {
	svc, uow, admin, member := heldMembers(t)
	const requests = 100
	var started, done sync.WaitGroup
	started.Add(requests)
	for range requests {
		done.Go(func() {
			started.Done()
			p, err := svc.Authorize(context.Background(), admin.WorkspaceID, member)
			if assert.NoError(t, err) {
				assert.Equal(t, model.RoleMember, p.Role)
			}
		})
	}
	started.Wait()
	require.Eventually(t, func() bool { return uow.transactions.Load() >= 1 }, 30*time.Second, time.Millisecond)
	close(uow.release)
	done.Wait()
	assert.Equal(t, int64(1), uow.transactions.Load(), "one read for them all")
}

// A request that comes after a membership was removed here does not
// share a read begun before the removal.
func TestARequestAfterARemovalDoesNotShareAReadBegunBefore(t *testing.T) {
	svc, uow, admin, member := heldMembers(t)
	before := make(chan error, 1)
	go func() {
		_, err := svc.Authorize(context.Background(), admin.WorkspaceID, member)
		before <- err
	}()
	require.Eventually(t, func() bool { return uow.transactions.Load() == 1 }, 30*time.Second, time.Millisecond, "the first read is held")

	require.NoError(t, svc.RemoveMember(context.Background(), admin, member))
	after := make(chan error, 1)
	go func() {
		_, err := svc.Authorize(context.Background(), admin.WorkspaceID, member)
		after <- err
	}()
	select { // a generous bound: it fails only when the request joined the held read
	case err := <-after:
		assert.True(t, domain.IsCode(err, domain.CodeForbidden), "read after the removal: %v", err)
	case <-time.After(30 * time.Second):
		t.Error("the request after the removal waits on the read begun before it")
	}

	close(uow.release)
	<-before // read before the removal: whatever it found, it is not cached
	_, err := svc.Authorize(context.Background(), admin.WorkspaceID, member)
	assert.True(t, domain.IsCode(err, domain.CodeForbidden), "%v", err)
}
