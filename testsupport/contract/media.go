package contract

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// mediaTable is the media table to the table contract (tables.go).
var mediaTable = table[model.Media]{
	repo: func(tx ports.Tx) tableRepo[model.Media] { return tx.Media() },
	keys: func(m *model.Media) (*uuid.UUID, *uuid.UUID) { return &m.ID, &m.WorkspaceID },
	row:  func(_ *testing.T, _ Harness, ws uuid.UUID) model.Media { return newMedia(ws) },
	full: func(m *model.Media) {
		m.Status, m.Reason = model.MediaReady, "a reason"
		m.SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		m.Variants = []model.MediaVariant{{Name: "thumbnail", ObjectKey: "t/1", SizeBytes: 10}, {Name: "medium", ObjectKey: "m/1", SizeBytes: 100}}
	},
	stored: func(m model.Media) model.Media {
		m.Variants = slices.Clone(m.Variants)
		m.CreatedAt, m.UpdatedAt = dbTime(m.CreatedAt), dbTime(m.UpdatedAt)
		return m
	},
	scramble: func(m *model.Media) { m.Variants[0].Name = "changed" },
	updates:  "replaces status, variants, reason and updated_at only",
	mutable: func(m *model.Media) {
		m.Status, m.Reason = model.MediaReady, "ok"
		m.Variants = []model.MediaVariant{{Name: "thumbnail", ObjectKey: "t/2", SizeBytes: 7}}
		m.UpdatedAt = m.UpdatedAt.Add(time.Minute)
	},
	immutable: func(m *model.Media) {
		m.Filename, m.ContentType, m.SizeBytes, m.ObjectKey = "other.png", "image/jpeg", 1, "other"
		m.SHA256 = "0000000000000000000000000000000000000000000000000000000000000000"
		m.CreatedAt = m.CreatedAt.Add(-time.Hour)
	},
}

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

// newMediaIn writes a new media record of ws and returns it.
func newMediaIn(t *testing.T, h Harness, ws uuid.UUID) model.Media {
	t.Helper()
	m := newMedia(ws)
	require.NoError(t, mediaTable.create(t, h, m))
	return m
}

func testMedia(t *testing.T, h Harness) {
	t.Run("no variants read back as nil, also after an update took them away", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMediaIn(t, h, ws)
		got, err := mediaTable.get(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Nil(t, got.Variants)

		changed, _ := mediaTable.change(m)
		require.NoError(t, mediaTable.update(t, h, changed))
		changed.Status = model.MediaRejected
		changed.Variants = nil
		changed.Reason = ""
		require.NoError(t, mediaTable.update(t, h, changed))
		got, err = mediaTable.get(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Nil(t, got.Variants)
		require.Empty(t, got.Reason)
	})

	t.Run("transition moves status and updated_at only from the given status", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMediaIn(t, h, ws)
		at := m.UpdatedAt.Add(time.Minute)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, at)
		})
		want := mediaTable.stored(m)
		want.Status, want.UpdatedAt = model.MediaProcessing, dbTime(at)
		got, err := mediaTable.get(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)

		// From a status the media is not in: refused, nothing changes.
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, at.Add(time.Minute))
		})
		requireCode(t, err, domain.CodeInvalidState)
		got, err = mediaTable.get(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)

		// A status the media comes back to can be left again: nothing of
		// the first transition outlives its transaction.
		back := m
		back.Status = model.MediaAwaitingUpload
		require.NoError(t, mediaTable.update(t, h, back))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaRejected, at)
		})
		got, err = mediaTable.get(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, model.MediaRejected, got.Status)
	})

	t.Run("awaiting upload since: only the workspace's media awaiting their upload, registered before, oldest first, bounded", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		base := writeTime().Add(-time.Hour)
		at := func(m model.Media, d time.Duration) model.Media {
			m.CreatedAt, m.UpdatedAt = base.Add(d), base.Add(d)
			require.NoError(t, mediaTable.create(t, h, m))
			return m
		}
		second := at(newMedia(ws), 2*time.Minute)
		first := at(newMedia(ws), time.Minute)
		completed := newMedia(ws)
		completed.Status = model.MediaProcessing
		at(completed, 0)
		at(newMedia(ws), 10*time.Minute) // too young
		at(newMedia(other), 0)           // another workspace's
		var got []model.Media
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			var err error
			got, err = tx.Media().AwaitingUploadSince(ctx, base.Add(5*time.Minute), 10)
			return err
		})
		require.Equal(t, []uuid.UUID{first.ID, second.ID}, mediaIDs(got))
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			var err error
			got, err = tx.Media().AwaitingUploadSince(ctx, base.Add(5*time.Minute), 1)
			return err
		})
		require.Equal(t, []uuid.UUID{first.ID}, mediaIDs(got))
	})

	t.Run("delete removes the media only from the given status", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		m := newMediaIn(t, h, ws)
		del := func(ws uuid.UUID, from model.MediaStatus) error {
			return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Delete(ctx, m.ID, from) })
		}
		requireCode(t, del(ws, model.MediaProcessing), domain.CodeInvalidState)
		requireCode(t, del(other, model.MediaAwaitingUpload), domain.CodeNotFound)
		got, err := mediaTable.get(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, mediaTable.stored(m), got, "a refused delete changes nothing")

		require.NoError(t, del(ws, model.MediaAwaitingUpload))
		_, err = mediaTable.get(t, h, ws, m.ID)
		requireCode(t, err, domain.CodeNotFound)
		listed := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.Media, error) {
			return tx.Media().List(ctx, ports.ListQuery{Limit: 10})
		})
		require.Empty(t, listed)
		requireCode(t, del(ws, model.MediaAwaitingUpload), domain.CodeNotFound)
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
		})
		requireCode(t, err, domain.CodeNotFound)
	})

	// The clean-up of an expired upload and a request completing it: the
	// loser finds the media gone (not found) or completed (invalid state),
	// as its adapter orders them.
	t.Run("of a delete and a concurrent transition from one status exactly one wins", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMediaIn(t, h, ws)
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, func(i int, ctx context.Context, tx ports.Tx) error {
			if i == 0 {
				return tx.Media().Delete(ctx, m.ID, model.MediaAwaitingUpload)
			}
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
		}))
		require.Contains(t, []domain.Code{domain.CodeNotFound, domain.CodeInvalidState}, domain.ErrorCode(loserErr), "loser: %v", loserErr)
		got, err := mediaTable.get(t, h, ws, m.ID)
		if winner == 0 {
			requireCode(t, err, domain.CodeNotFound)
			return
		}
		require.NoError(t, err)
		require.Equal(t, model.MediaProcessing, got.Status)
	})

	t.Run("transition of missing media or of another workspace's is not found", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		err := transact(t, h, wsA, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, uuid.New(), model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
		})
		requireCode(t, err, domain.CodeNotFound)

		m := newMediaIn(t, h, wsA)
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
		})
		requireCode(t, err, domain.CodeNotFound)
		got, err := mediaTable.get(t, h, wsA, m.ID)
		require.NoError(t, err)
		require.Equal(t, model.MediaAwaitingUpload, got.Status)
	})

	// Two requests completing one upload: both transactions are open, both
	// read awaiting_upload, both transition. In PostgreSQL the second UPDATE
	// waits for the first transaction, then finds the new status.
	t.Run("of two concurrent transitions from one status exactly one wins", func(t *testing.T) {
		ws := newWorkspace(t, h)
		m := newMediaIn(t, h, ws)
		_, loserErr := oneWins(t, raceTwo(t, h, ws, func(_ int, ctx context.Context, tx ports.Tx) error {
			// The plain read a use case does first: it locks nothing.
			if _, err := tx.Media().Get(ctx, m.ID); err != nil {
				return err
			}
			return tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaProcessing, writeTime())
		}))
		requireCode(t, loserErr, domain.CodeInvalidState)
		got, err := mediaTable.get(t, h, ws, m.ID)
		require.NoError(t, err)
		require.Equal(t, model.MediaProcessing, got.Status)
	})
}

// The media kind's contract (kinds.go).
var _ = registerKind("media", kindContract{
	table: mediaTable.check, own: testMedia,
	list: listing(byStatus(mediaTable, func(m *model.Media) *model.MediaStatus { return &m.Status }, model.MediaReady, model.MediaAwaitingUpload)),
})

func mediaIDs(ms []model.Media) []uuid.UUID {
	ids := make([]uuid.UUID, 0, len(ms))
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}
