package contract

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func listMembers(t *testing.T, h Harness, ws uuid.UUID) []uuid.UUID {
	t.Helper()
	var users []uuid.UUID
	mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		ms, err := tx.Members().List(ctx, ports.ListQuery{Limit: 1000})
		for _, m := range ms {
			require.Equal(t, ws, m.WorkspaceID)
			users = append(users, m.UserID)
		}
		return err
	})
	return users
}

// removeMember removes user from ws in a transaction of its own.
func removeMember(t *testing.T, h Harness, ws, user uuid.UUID) error {
	t.Helper()
	return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Members().Remove(ctx, user) })
}

// testMemberAdmin: members are listed in user id order, paged, removed once, and a
// removed user may be added again; nothing crosses workspaces.
func testMemberAdmin(t *testing.T, h Harness) {
	t.Run("list, remove, add again", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		first := newMember(t, h, ws)
		second := newMember(t, h, ws)
		newMember(t, h, other)
		require.Subset(t, listMembers(t, h, ws), []uuid.UUID{first, second})
		before := len(listMembers(t, h, ws))

		require.NoError(t, removeMember(t, h, ws, first))
		require.NotContains(t, listMembers(t, h, ws), first)
		require.Len(t, listMembers(t, h, ws), before-1)
		_, err := getMember(t, h, ws, first)
		requireCode(t, err, domain.CodeNotFound)
		requireCode(t, removeMember(t, h, ws, first), domain.CodeNotFound)

		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Members().Add(ctx, model.Member{WorkspaceID: ws, UserID: first, Role: model.RoleAdmin, CreatedAt: now()})
		})
		require.Contains(t, listMembers(t, h, ws), first)
	})

	t.Run("pages in user id order, past a removed cursor", func(t *testing.T) {
		ws := newWorkspace(t, h)
		for range 4 {
			newMember(t, h, ws)
		}
		all := listMembers(t, h, ws)
		require.True(t, slices.IsSortedFunc(all, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }), "user id order")
		page := func(after uuid.UUID, limit int) []uuid.UUID {
			var users []uuid.UUID
			mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
				ms, err := tx.Members().List(ctx, ports.ListQuery{StartingAfter: after, Limit: limit})
				for _, m := range ms {
					users = append(users, m.UserID)
				}
				return err
			})
			return users
		}
		require.Equal(t, all[:2], page(uuid.Nil, 2))
		require.Equal(t, all[2:4], page(all[1], 2))
		// The member that ends a page leaves before the next page is read:
		// the next page starts where it would have.
		require.NoError(t, removeMember(t, h, ws, all[1]))
		require.Equal(t, all[2:4], page(all[1], 2))
		require.Empty(t, page(all[len(all)-1], 2))
		require.Empty(t, page(uuid.Nil, 0))
	})

	t.Run("another workspace's member cannot be removed", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		stranger := newMember(t, h, other)
		requireCode(t, removeMember(t, h, ws, stranger), domain.CodeNotFound)
		require.Contains(t, listMembers(t, h, other), stranger)
	})

	t.Run("the last admin stays", func(t *testing.T) {
		ws := newWorkspace(t, h)
		admin := newMember(t, h, ws)
		requireCode(t, removeMember(t, h, ws, admin), domain.CodeInvalidState)
		require.Contains(t, listMembers(t, h, ws), admin)
	})

	t.Run("two concurrent removals of the last two admins leave one", func(t *testing.T) {
		ws := newWorkspace(t, h)
		admins := [2]uuid.UUID{newMember(t, h, ws), newMember(t, h, ws)}
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, func(i int, ctx context.Context, tx ports.Tx) error {
			return tx.Members().Remove(ctx, admins[i])
		}))
		requireCode(t, loserErr, domain.CodeInvalidState)
		require.Equal(t, []uuid.UUID{admins[1-winner]}, listMembers(t, h, ws))
	})

	t.Run("a removal rolled back leaves the member", func(t *testing.T) {
		ws := newWorkspace(t, h)
		newMember(t, h, ws)
		user := newMember(t, h, ws)
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.Members().Remove(ctx, user); err != nil {
				return err
			}
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		require.Contains(t, listMembers(t, h, ws), user)
	})
}
