package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func newMedia(ws uuid.UUID) model.Media {
	at := writeTime()
	id := uuid.New()
	return model.Media{
		ID:          id,
		WorkspaceID: ws,
		Filename:    "photo été.png",
		ContentType: "image/png",
		SizeBytes:   123456,
		ObjectKey:   "media/" + id.String(),
		Status:      model.MediaAwaitingUpload,
		CreatedAt:   at,
		UpdatedAt:   at,
	}
}

func normMedia(m model.Media) model.Media {
	m.CreatedAt = dbTime(m.CreatedAt)
	m.UpdatedAt = dbTime(m.UpdatedAt)
	return m
}

func getMedia(t *testing.T, h Harness, ws, id uuid.UUID) (model.Media, error) {
	t.Helper()
	var m model.Media
	err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		m, err = tx.Media().Get(ctx, id)
		return err
	})
	return m, err
}

func testMedia(t *testing.T, h Harness) {
	t.Run("create then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMedia(ws)
		m.Status = model.MediaReady
		m.Variants = []model.MediaVariant{{Name: "thumbnail", ObjectKey: "t/1", SizeBytes: 10}, {Name: "medium", ObjectKey: "m/1", SizeBytes: 100}}
		m.Reason = "a reason"
		want := normMedia(m)
		want.Variants = append([]model.MediaVariant(nil), m.Variants...)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
		m.Variants[0].Name = "changed"

		got, err := getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("update replaces status, variants, reason and updated_at only", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMedia(ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
		got, err := getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Nil(t, got.Variants, "no variants read back as nil")

		changed := m
		changed.Status = model.MediaReady
		changed.Variants = []model.MediaVariant{{Name: "thumbnail", ObjectKey: "t/2", SizeBytes: 7}}
		changed.Reason = "ok"
		changed.UpdatedAt = m.UpdatedAt.Add(time.Minute)
		changed.Filename = "other.png"
		changed.ContentType = "image/jpeg"
		changed.SizeBytes = 1
		changed.ObjectKey = "other"
		changed.CreatedAt = m.CreatedAt.Add(-time.Hour)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Update(ctx, changed) })

		want := normMedia(m)
		want.Status, want.Variants, want.Reason, want.UpdatedAt = changed.Status, changed.Variants, changed.Reason, dbTime(changed.UpdatedAt)
		got, err = getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)

		// Back to no variants and no reason.
		changed.Status = model.MediaRejected
		changed.Variants = nil
		changed.Reason = ""
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Update(ctx, changed) })
		got, err = getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Nil(t, got.Variants)
		require.Empty(t, got.Reason)
	})

	t.Run("missing is not found, an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getMedia(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Update(ctx, newMedia(ws)) })
		requireCode(t, err, domain.CodeNotFound)

		m := newMedia(ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
		again := newMedia(ws)
		again.ID = m.ID
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, again) })
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("media of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		m := newMedia(wsA)
		inTx(t, h, wsA, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
		_, err := getMedia(t, h, wsB, m.ID)
		requireCode(t, err, domain.CodeNotFound)
		hijack := m
		hijack.Status = model.MediaRejected
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Update(ctx, hijack) })
		requireCode(t, err, domain.CodeNotFound)
		got, err := getMedia(t, h, wsA, m.ID)
		require.NoError(t, err)
		require.Equal(t, model.MediaAwaitingUpload, got.Status)
	})

	t.Run("transition moves status and updated_at only from the given status", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMedia(ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
		at := m.UpdatedAt.Add(time.Minute)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, at)
		})
		want := normMedia(m)
		want.Status, want.UpdatedAt = model.MediaProcessing, dbTime(at)
		got, err := getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)

		// From a status the media is not in: refused, nothing changes.
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, at.Add(time.Minute))
		})
		requireCode(t, err, domain.CodeInvalidState)
		got, err = getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)

		// A status the media comes back to can be left again: nothing of
		// the first transition outlives its transaction.
		back := m
		back.Status = model.MediaAwaitingUpload
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Update(ctx, back) })
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaRejected, at)
		})
		got, err = getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, model.MediaRejected, got.Status)
	})

	t.Run("transition of missing media or of another workspace's is not found", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		err := transact(t, h, wsA, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, uuid.New(), model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
		})
		requireCode(t, err, domain.CodeNotFound)

		m := newMedia(wsA)
		inTx(t, h, wsA, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
		})
		requireCode(t, err, domain.CodeNotFound)
		got, err := getMedia(t, h, wsA, m.ID)
		require.NoError(t, err)
		require.Equal(t, model.MediaAwaitingUpload, got.Status)
	})

	// Two requests completing one upload: both transactions are open, both
	// read awaiting_upload, both transition. In PostgreSQL the second UPDATE
	// waits for the first transaction, then finds the new status.
	t.Run("of two concurrent transitions from one status exactly one wins", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMedia(ws)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
		var attempts [2]func(ctx context.Context, tx ports.Tx) error
		for i := range attempts {
			attempts[i] = func(ctx context.Context, tx ports.Tx) error {
				// The plain read a use case does first: it locks nothing.
				if _, err := tx.Media().Get(ctx, m.ID); err != nil {
					return err
				}
				return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
			}
		}
		_, loserErr := oneWins(t, raceTwo(t, h, ws, attempts))
		requireCode(t, loserErr, domain.CodeInvalidState)
		got, err := getMedia(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, model.MediaProcessing, got.Status)
	})
}
