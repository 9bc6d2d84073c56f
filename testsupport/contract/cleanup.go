package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// deleteExpired runs DeleteExpired in its own transaction of workspace.
func deleteExpired(t *testing.T, h Harness, workspace uuid.UUID, now time.Time, limit int) int {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.Idempotency().DeleteExpired(ctx, now, limit)
	})
}

func testIdempotencyCleanup(t *testing.T, h Harness) {
	t.Run("delete expired removes expired records only, in bounded batches", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		user := newMember(t, h, ws)
		expiredAt := now().Add(-time.Hour)
		for range 3 {
			rec := expiredRecord(newScope(ws, user), expiredAt)
			claimAndComplete(t, h, rec, savedResponse(), rec.CreatedAt)
		}
		live := newRecord(newScope(ws, user))
		liveResp := savedResponse()
		liveAt := now()
		claimAndComplete(t, h, live, liveResp, liveAt)
		otherRec := expiredRecord(newScope(other, newMember(t, h, other)), expiredAt)
		claimAndComplete(t, h, otherRec, savedResponse(), otherRec.CreatedAt)

		// A rolled-back delete deletes nothing.
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			n, err := tx.Idempotency().DeleteExpired(ctx, now(), 10)
			require.NoError(t, err)
			require.Equal(t, 3, n)
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)

		require.Equal(t, 2, deleteExpired(t, h, ws, now(), 2))
		require.Equal(t, 1, deleteExpired(t, h, ws, now(), 2))
		require.Equal(t, 0, deleteExpired(t, h, ws, now(), 2))

		// The live record is still there, and so is the other workspace's.
		existing, err := claim(t, h, newRecord(live.Scope))
		require.NoError(t, err)
		requireCompleted(t, live, liveResp, liveAt, existing)
		require.Equal(t, 1, deleteExpired(t, h, other, now(), 10))
	})

	t.Run("delete expired judges expiry at the given time", func(t *testing.T) {
		ws := newWorkspace(t, h)
		rec := newRecord(newScope(ws, newMember(t, h, ws)))
		claimAndComplete(t, h, rec, savedResponse(), now())
		require.Equal(t, 0, deleteExpired(t, h, ws, rec.ExpiresAt.Add(-time.Second), 10))
		require.Equal(t, 1, deleteExpired(t, h, ws, rec.ExpiresAt.Add(time.Second), 10))
		requireClaimable(t, h, newRecord(rec.Scope))
	})

	// Discovery looks across all workspaces, and a shared database may hold
	// expired records of other tests. So this test's records expired long
	// ago and discovery is asked "as of" just after them: only records at
	// least as old can be listed besides this test's own, and the test
	// deletes its own when it ends.
	t.Run("discovery lists workspaces with expired records", func(t *testing.T) {
		asOf := now().AddDate(-20, 0, 0)
		expiredA, expiredB, live := newWorkspace(t, h), newWorkspace(t, h), newWorkspace(t, h)
		t.Cleanup(func() {
			// t.Context() is already cancelled when cleanups run.
			for _, ws := range []uuid.UUID{expiredA, expiredB, live} {
				err := h.UoW.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
					_, err := tx.Idempotency().DeleteExpired(ctx, time.Now(), 100)
					return err
				})
				require.NoError(t, err)
			}
		})
		userA := newMember(t, h, expiredA)
		for _, scope := range []model.IdempotencyScope{
			newScope(expiredA, userA), newScope(expiredA, userA), newScope(expiredB, newMember(t, h, expiredB)),
		} {
			rec := expiredRecord(scope, asOf.Add(-time.Minute))
			claimAndComplete(t, h, rec, savedResponse(), rec.CreatedAt)
		}
		rec := expiredRecord(newScope(live, newMember(t, h, live)), asOf.Add(time.Minute))
		claimAndComplete(t, h, rec, savedResponse(), rec.CreatedAt)

		expired := func(limit int) ([]uuid.UUID, error) {
			return h.Discovery.WorkspacesWithExpiredIdempotency(t.Context(), asOf, limit)
		}
		requireDiscovers(t, expired, []uuid.UUID{expiredA, expiredB}, []uuid.UUID{live})

		// Once deleted, a workspace is no longer listed.
		require.Equal(t, 2, deleteExpired(t, h, expiredA, asOf, 10))
		requireDiscovers(t, expired, []uuid.UUID{expiredB}, []uuid.UUID{expiredA})
	})
}
