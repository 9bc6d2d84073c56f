package contract

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

const retention = 48 * time.Hour

func newScope(workspace, user uuid.UUID) model.IdempotencyScope {
	return model.IdempotencyScope{
		WorkspaceID: workspace,
		UserID:      user,
		Method:      "POST",
		Path:        "/v1/workspaces/" + workspace.String() + "/stores",
		Key:         uuid.New(),
	}
}

// newRecord is what a use case claims with: a fresh fingerprint, created
// now, expiring after the default retention.
func newRecord(scope model.IdempotencyScope) model.IdempotencyRecord {
	at := now()
	return model.IdempotencyRecord{
		Scope:            scope,
		FingerprintKeyID: "k" + uuid.NewString()[:8],
		Fingerprint:      randomBytes(32),
		Status:           model.IdempotencyInProgress,
		CreatedAt:        at,
		ExpiresAt:        at.Add(retention),
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return b
}

// expiredRecord is a record whose retention ended at expiredAt.
func expiredRecord(scope model.IdempotencyScope, expiredAt time.Time) model.IdempotencyRecord {
	rec := newRecord(scope)
	rec.CreatedAt = expiredAt.Add(-retention)
	rec.ExpiresAt = expiredAt
	return rec
}

func savedResponse() model.SavedResponse {
	return model.SavedResponse{
		Status:  201,
		Headers: map[string]string{"Location": "/v1/stores/" + uuid.NewString(), "ETag": `"1"`},
		Body:    append([]byte(`{"id":"`+uuid.NewString()+`","name":"商店"}`), 0xff, 0x00),
	}
}

// claim runs Claim in its own transaction and rolls back unless it claimed.
func claim(t *testing.T, h Harness, rec model.IdempotencyRecord) (*model.IdempotencyRecord, error) {
	t.Helper()
	var existing *model.IdempotencyRecord
	err := transact(t, h, rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		existing, err = tx.Idempotency().Claim(ctx, rec)
		if err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	return existing, err
}

// claimAndComplete claims rec's scope, completes it with resp at at, and
// commits.
func claimAndComplete(t *testing.T, h Harness, rec model.IdempotencyRecord, resp model.SavedResponse, at time.Time) {
	t.Helper()
	mustTransact(t, h, rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		existing, err := tx.Idempotency().Claim(ctx, rec)
		if err != nil {
			return err
		}
		require.Nil(t, existing, "claiming a fresh scope")
		return tx.Idempotency().Complete(ctx, rec.Scope, resp, at)
	})
}

// requireCompleted asserts existing is the record rec completed with resp at at.
func requireCompleted(t *testing.T, rec model.IdempotencyRecord, resp model.SavedResponse, at time.Time, existing *model.IdempotencyRecord) {
	t.Helper()
	require.NotNil(t, existing, "want the completed record")
	require.Equal(t, rec.Scope, existing.Scope)
	require.Equal(t, rec.FingerprintKeyID, existing.FingerprintKeyID)
	require.Equal(t, rec.Fingerprint, existing.Fingerprint)
	require.Equal(t, model.IdempotencyCompleted, existing.Status)
	require.Equal(t, resp, existing.Response)
	require.Equal(t, dbTime(at), dbTime(existing.CompletedAt))
	require.Equal(t, dbTime(rec.ExpiresAt), dbTime(existing.ExpiresAt))
}

func testIdempotency(t *testing.T, h Harness) {
	t.Run("a completed record is returned to later claims", func(t *testing.T) {
		ws := newWorkspace(t, h)
		rec := newRecord(newScope(ws, newMember(t, h, ws)))
		resp := savedResponse()
		at := now().Add(time.Second)
		claimAndComplete(t, h, rec, resp, at)

		// A retry carries another fingerprint; Claim does not judge it.
		retry := newRecord(rec.Scope)
		existing, err := claim(t, h, retry)
		require.NoError(t, err)
		requireCompleted(t, rec, resp, at, existing)
		// And replaying changed nothing.
		existing, err = claim(t, h, retry)
		require.NoError(t, err)
		requireCompleted(t, rec, resp, at, existing)
	})

	t.Run("a scope held by an open transaction is in progress at once", func(t *testing.T) {
		ws := newWorkspace(t, h)
		rec := newRecord(newScope(ws, newMember(t, h, ws)))

		release := holdOpen(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			existing, err := tx.Idempotency().Claim(ctx, rec)
			if err == nil && existing != nil {
				err = domain.Errorf(domain.CodeInternal, "contract: fresh scope already claimed")
			}
			return err
		}, rollBack)

		// The second claim must not wait for the holder, which stays open
		// until it has answered.
		_, err := claimWithin(t, h, newRecord(rec.Scope))
		requireCode(t, err, domain.CodeIdempotencyInProgress)

		require.ErrorIs(t, release(), errRollback)
		// The holder rolled back: its claim went with it.
		requireClaimable(t, h, newRecord(rec.Scope))
	})

	t.Run("an expired record is treated as absent", func(t *testing.T) {
		scope := scopeWithExpiredRecord(t, h)
		fresh := newRecord(scope)
		resp := savedResponse()
		at := now()
		claimAndComplete(t, h, fresh, resp, at)
		existing, err := claim(t, h, newRecord(scope))
		require.NoError(t, err)
		requireCompleted(t, fresh, resp, at, existing)
	})

	t.Run("scopes differing in one part are independent", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		user := newMember(t, h, wsA)
		base := newScope(wsA, user)
		claimAndComplete(t, h, newRecord(base), savedResponse(), now())

		otherUser := base
		otherUser.UserID = newMember(t, h, wsA)
		otherMethod := base
		otherMethod.Method = "PUT"
		otherPath := base
		otherPath.Path = base.Path + "/" + uuid.NewString()
		otherKey := base
		otherKey.Key = uuid.New()
		otherWorkspace := base
		otherWorkspace.WorkspaceID = wsB
		for name, scope := range map[string]model.IdempotencyScope{
			"user": otherUser, "method": otherMethod, "path": otherPath, "key": otherKey, "workspace": otherWorkspace,
		} {
			t.Run(name, func(t *testing.T) {
				rec := newRecord(scope)
				existing, err := claim(t, h, rec)
				require.NoError(t, err)
				require.Nil(t, existing)
				resp := savedResponse()
				at := now()
				claimAndComplete(t, h, rec, resp, at)
				existing, err = claim(t, h, newRecord(scope))
				require.NoError(t, err)
				requireCompleted(t, rec, resp, at, existing)
			})
		}
	})

	t.Run("complete without a claim is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		scope := newScope(ws, newMember(t, h, ws))
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Idempotency().Complete(ctx, scope, savedResponse(), now())
		})
		requireCode(t, err, domain.CodeNotFound)

		// A record completed by an earlier transaction is not this one's claim.
		rec := newRecord(scope)
		resp := savedResponse()
		at := now()
		claimAndComplete(t, h, rec, resp, at)
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Idempotency().Complete(ctx, scope, savedResponse(), now())
		})
		requireCode(t, err, domain.CodeNotFound)
		existing, err := claim(t, h, newRecord(scope))
		require.NoError(t, err)
		requireCompleted(t, rec, resp, at, existing)
	})
}
