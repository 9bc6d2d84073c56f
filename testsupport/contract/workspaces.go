package contract

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func testWorkspaces(t *testing.T, h Harness) {
	t.Run("create then get", func(t *testing.T) {
		w := model.Workspace{ID: uuid.New(), Name: "Acme 工作区", CreatedAt: now()}
		mustTransact(t, h, w.ID, func(ctx context.Context, tx ports.Tx) error {
			return tx.Workspaces().Create(ctx, w)
		})
		got := mustQuery(t, h, w.ID, func(ctx context.Context, tx ports.Tx) (model.Workspace, error) {
			return tx.Workspaces().Get(ctx, w.ID)
		})
		got.CreatedAt = dbTime(got.CreatedAt)
		require.Equal(t, w, got)
	})

	t.Run("duplicate id is a conflict", func(t *testing.T) {
		id := newWorkspace(t, h)
		err := transact(t, h, id, func(ctx context.Context, tx ports.Tx) error {
			return tx.Workspaces().Create(ctx, model.Workspace{ID: id, Name: "again", CreatedAt: now()})
		})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("missing is not found", func(t *testing.T) {
		id := uuid.New()
		err := transact(t, h, id, func(ctx context.Context, tx ports.Tx) error {
			_, err := tx.Workspaces().Get(ctx, id)
			return err
		})
		requireCode(t, err, domain.CodeNotFound)
	})
}

// getMember reads the membership of user in ws.
func getMember(t *testing.T, h Harness, ws, user uuid.UUID) (model.Member, error) {
	t.Helper()
	return query(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.Member, error) { return tx.Members().Get(ctx, user) })
}

func testMembers(t *testing.T, h Harness) {
	t.Run("add then get", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := model.Member{WorkspaceID: ws, UserID: uuid.New(), Role: model.RoleMember, CreatedAt: now()}
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Members().Add(ctx, m)
		})
		got, err := getMember(t, h, ws, m.UserID)
		require.NoError(t, err)
		got.CreatedAt = dbTime(got.CreatedAt)
		require.Equal(t, m, got)
	})

	t.Run("adding a member twice is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		user := newMember(t, h, ws)
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Members().Add(ctx, model.Member{WorkspaceID: ws, UserID: user, Role: model.RoleMember, CreatedAt: now()})
		})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("a non-member is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getMember(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("a member of another workspace is not found", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		user := newMember(t, h, wsA)
		_, err := getMember(t, h, wsB, user)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("the same user may join two workspaces", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		user := newMember(t, h, wsA)
		mustTransact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Members().Add(ctx, model.Member{WorkspaceID: wsB, UserID: user, Role: model.RoleMember, CreatedAt: now()})
		})
		got, err := getMember(t, h, wsB, user)
		require.NoError(t, err)
		require.Equal(t, wsB, got.WorkspaceID)
		require.Equal(t, model.RoleMember, got.Role)
	})
}
