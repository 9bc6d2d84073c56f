package media_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/products"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// oneWorkspace is a discovery that names ws while it has media awaiting
// their upload (the PostgreSQL discovery is tested with its adapter).
type oneWorkspace struct {
	ports.Retention
	uow ports.UnitOfWork
	ws  uuid.UUID
}

func (d oneWorkspace) WorkspacesWithExpired(ctx context.Context, kind model.Expiring, before time.Time, limit int) ([]uuid.UUID, error) {
	if kind != model.ExpiringMediaUploads {
		return nil, domain.Errorf(domain.CodeValidation, "unexpected kind %s", kind)
	}
	var found []model.Media
	err := d.uow.Transact(ctx, d.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		found, err = tx.Media().AwaitingUploadSince(ctx, before, 1)
		return err
	})
	if err != nil || len(found) == 0 || limit <= 0 {
		return nil, err
	}
	return []uuid.UUID{d.ws}, nil
}

// Media registered and never completed are gone after the expiry (a short
// one here): the row (reading it answers not found), the object, uploaded
// or not, from the real S3 server, and the id from the draft naming it;
// completed media and younger registrations stay.
func TestUploadsNeverCompletedExpireWithTheirObject(t *testing.T) {
	clock := testkit.NewManualClock()
	h, store, _ := s3HarnessWithServer(t, clock)
	uow := h.uow
	ctx := context.Background()
	data := pngBytes(t, 32, 32)
	register := func() model.Media {
		m, err := h.register(ctx, media.Registration{Filename: "p.png", ContentType: "image/png", SizeBytes: int64(len(data)), SHA256: hexSHA256(data)})
		require.NoError(t, err)
		return m
	}
	upload := func(m model.Media) {
		put, ok, err := h.svc.UploadURL(ctx, m)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "200", curlPut(t, put, data))
	}
	const expiry = 10 * time.Minute // short, for the test; the setting's floor is media.MinUploadExpiry

	neverUploaded := register()
	uploadedNotCompleted := register()
	upload(uploadedNotCompleted)
	completed := register()
	upload(completed)
	_, _, _, err := h.complete(t, ctx, completed.ID)
	require.NoError(t, err)
	drafts := products.NewService(uow, clock, system.NewIDs())
	draft, err := drafts.Create(ctx, h.p, products.Draft{Title: "Mug", PriceMinor: 1999, Currency: "EUR",
		MediaIDs: []uuid.UUID{neverUploaded.ID, completed.ID, uploadedNotCompleted.ID}})
	require.NoError(t, err)
	clock.Advance(expiry - time.Minute)
	young := register()
	upload(young)

	expirer := &media.UploadExpirer{UOW: uow, Discovery: oneWorkspace{uow: uow, ws: h.p.WorkspaceID}, Store: store, Clock: clock, Expiry: expiry, Batch: 1}
	n, err := expirer.RunOnce(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is old enough yet")

	clock.Advance(2 * time.Minute)
	n, err = expirer.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, m := range []model.Media{neverUploaded, uploadedNotCompleted} {
		_, err := h.svc.Get(ctx, h.p, m.ID)
		assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "the media is gone: %v", err)
		_, err = store.Stat(ctx, m.ObjectKey)
		assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "the object is gone: %v", err)
	}
	for _, m := range []model.Media{completed, young} {
		got, err := h.svc.Get(ctx, h.p, m.ID)
		require.NoError(t, err)
		assert.Equal(t, m.ID, got.ID)
		_, err = store.Stat(ctx, m.ObjectKey)
		assert.NoError(t, err, "the object stays")
	}
	_, _, _, err = h.complete(t, ctx, uploadedNotCompleted.ID)
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "an expired upload cannot be completed: %v", err)

	got, err := drafts.Get(ctx, h.p, draft.ID)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{completed.ID}, got.MediaIDs, "the draft forgets the media that are gone")
	assert.Greater(t, got.Revision, draft.Revision, "and its editor is told it changed")

	n, err = expirer.RunOnce(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "a second pass finds nothing")
}
