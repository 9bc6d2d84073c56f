package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// MediaRepository stores uploaded files' records; Get (Resources) reads
// the media with its variants.
type MediaRepository interface {
	Resources[model.Media]
	// Update replaces status, variants, reason and updated_at,
	// unconditionally; domain.CodeNotFound if absent. A change of status
	// that must happen once (one of several concurrent requests) is a
	// Transition instead.
	Update(ctx context.Context, m model.Media) error
	// Transition sets status to and updated_at at of media id only if the
	// stored status is from: a compare-and-set, so of two concurrent
	// transactions moving the same media out of from exactly one succeeds
	// (the other waits for it where the database locks the row, then sees
	// the new status). domain.CodeInvalidState if the media has another
	// status (nothing changes), domain.CodeNotFound if absent.
	Transition(ctx context.Context, id uuid.UUID, from, to model.MediaStatus, at time.Time) error
	// Delete removes media id only if its stored status is from: the same
	// compare-and-set as Transition, so of a Delete and a concurrent
	// Transition out of from exactly one succeeds (the other finds the
	// media gone, or in its new status). domain.CodeInvalidState if the
	// media has another status (nothing changes), domain.CodeNotFound if
	// absent.
	Delete(ctx context.Context, id uuid.UUID, from model.MediaStatus) error
	// AwaitingUploadSince returns up to limit media of the transaction's
	// workspace still awaiting their upload that were registered before
	// `before`, oldest first, skipping rows another transaction holds
	// (PostgreSQL locks the rows returned until the transaction ends).
	AwaitingUploadSince(ctx context.Context, before time.Time, limit int) ([]model.Media, error)
}
