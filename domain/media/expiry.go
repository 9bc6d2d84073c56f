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

// Bounds of the upload expiry. The shortest must outlast a pre-signed
// upload URL (at most an hour): a client uploading with a URL it just got
// must not find its media gone.
const (
	DefaultUploadExpiry = 24 * time.Hour
	MinUploadExpiry     = 2 * time.Hour
)

// UploadExpirer removes media registered and never completed: after
// Expiry, each such media is deleted, row and object (if the client
// uploaded one), and taken out of the product drafts naming it
// (ports.ProductRepository.ForgetMedia), so nothing is left that names
// it: reading it answers not found, as for an id never registered.
//
// Per media, in one transaction of its workspace: the row is locked and
// deleted by compare-and-set on awaiting_upload (a concurrent Complete
// either went first, and the media is left alone, or waits and then finds
// it gone), the object is deleted, the drafts forget the media, then the
// transaction commits. A failure before the commit leaves the media
// awaiting its upload and the next pass repeats the object's delete,
// which is idempotent; so no media row goes with its object left behind.
// Two cases are left. A client holding an upload URL signed shortly
// before the expiry can still upload with it after (for at most the URL's
// life), and that object stays. A draft saved concurrently with the
// expiry that adds the media (it read the media before the expiry
// committed, and writes after the drafts were rewritten) keeps its id;
// its next save is refused (CodeReferenceNotFound, naming the id) until
// the editor drops it.
type UploadExpirer struct {
	UOW       ports.UnitOfWork
	Discovery ports.Retention
	Store     ports.ObjectStore
	Clock     ports.Clock
	Expiry    time.Duration
	Batch     int
}

// RunOnce removes every media whose upload expired by now, with its
// object, and says how many.
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
	var gone []uuid.UUID
	for _, m := range expired {
		err := tx.Media().Delete(ctx, m.ID, model.MediaAwaitingUpload)
		if domain.IsCode(err, domain.CodeInvalidState) {
			continue // completed meanwhile: not expired
		}
		if err != nil {
			return 0, err
		}
		if err := e.Store.Delete(ctx, m.ObjectKey); err != nil {
			return 0, err
		}
		gone = append(gone, m.ID)
	}
	if len(gone) > 0 {
		if _, err := tx.Products().ForgetMedia(ctx, gone, e.Clock.Now()); err != nil {
			return 0, err
		}
	}
	return len(gone), nil
}
