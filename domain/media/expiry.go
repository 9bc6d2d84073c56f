package media

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/sweep"
	"github.com/oncehq/once/ports"
)

// ReasonUploadExpired is recorded on media whose upload was not completed
// in time.
const ReasonUploadExpired = "the upload was not completed in time"

// Bounds of the upload expiry. The shortest must outlast a pre-signed
// upload URL (at most an hour): a client uploading with a URL it just got
// must not find its media gone.
const (
	DefaultUploadExpiry = 24 * time.Hour
	MinUploadExpiry     = 2 * time.Hour
)

// UploadExpirer ends media registered and never completed: after Expiry,
// each such media is rejected with ReasonUploadExpired and its object,
// if the client uploaded one, is deleted. The row stays (rejected, as
// content that failed its checks does): a product draft may name the
// media, and reads it as rejected rather than as a dangling id.
//
// Per media, in one transaction of its workspace: the row is locked and
// moved out of awaiting_upload by compare-and-set (a concurrent Complete
// either went first, and the media is left alone, or waits and then finds
// it rejected), the object is deleted, then the transaction commits. A
// failure before the commit leaves the media awaiting its upload and the
// next pass repeats the delete, which is idempotent; so no media is
// rejected with its object left behind. One case is left: a client
// holding an upload URL signed shortly before the expiry can still upload
// with it after (for at most the URL's life), and that object stays.
type UploadExpirer struct {
	UOW       ports.UnitOfWork
	Discovery ports.Retention
	Store     ports.ObjectStore
	Clock     ports.Clock
	Expiry    time.Duration
	Batch     int
}

// RunOnce rejects every media whose upload expired by now and deletes
// its object, and says how many.
func (e *UploadExpirer) RunOnce(ctx context.Context) (int, error) {
	before := e.Clock.Now().Add(-e.Expiry)
	return sweep.Run(ctx, e.UOW, sweep.Job{
		Discover: func(ctx context.Context, limit int) ([]uuid.UUID, error) {
			return e.Discovery.WorkspacesWithExpired(ctx, model.ExpiringMediaUploads, before, limit)
		},
		Delete: func(ctx context.Context, tx ports.Tx, limit int) (int, error) {
			return e.expireIn(ctx, tx, before, limit)
		},
		Batch: max(e.Batch, 1),
	})
}

func (e *UploadExpirer) expireIn(ctx context.Context, tx ports.Tx, before time.Time, limit int) (int, error) {
	expired, err := tx.Media().AwaitingUploadSince(ctx, before, limit)
	if err != nil {
		return 0, err
	}
	now := e.Clock.Now()
	n := 0
	for _, m := range expired {
		err := tx.Media().Transition(ctx, m.ID, model.MediaAwaitingUpload, model.MediaRejected, now)
		if domain.IsCode(err, domain.CodeInvalidState) {
			continue // completed meanwhile: not expired
		}
		if err != nil {
			return n, err
		}
		m.Status, m.Reason, m.UpdatedAt = model.MediaRejected, ReasonUploadExpired, now
		if err := tx.Media().Update(ctx, m); err != nil {
			return n, err
		}
		if err := e.Store.Delete(ctx, m.ObjectKey); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
