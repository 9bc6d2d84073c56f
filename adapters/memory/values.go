package memory

import (
	"bytes"
	"encoding/json"
	"maps"
	"time"

	"github.com/oncehq/once/domain/model"
)

// The helpers below make stored values behave like database rows: times are
// kept in UTC at microsecond precision (timestamptz), and byte slices and
// maps are copied on the way in and out so no caller shares memory with the
// stored row.

func dbTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

func copyWorkspace(w model.Workspace) model.Workspace {
	w.CreatedAt = dbTime(w.CreatedAt)
	return w
}

func copyMember(m model.Member) model.Member {
	m.CreatedAt = dbTime(m.CreatedAt)
	return m
}

func copyStore(s model.Store) model.Store {
	s.SealedCredentials = bytes.Clone(s.SealedCredentials)
	s.CreatedAt = dbTime(s.CreatedAt)
	s.UpdatedAt = dbTime(s.UpdatedAt)
	return s
}

func copyOperation(op model.Operation) model.Operation {
	op.CreatedAt = dbTime(op.CreatedAt)
	op.UpdatedAt = dbTime(op.UpdatedAt)
	return op
}

func copyEvent(e model.OutboxEvent) model.OutboxEvent {
	e.Payload = json.RawMessage(bytes.Clone(e.Payload))
	e.NextAttemptAt = dbTime(e.NextAttemptAt)
	e.LockedUntil = dbTime(e.LockedUntil)
	e.CreatedAt = dbTime(e.CreatedAt)
	e.DispatchedAt = dbTime(e.DispatchedAt)
	return e
}

func copyResponse(r model.SavedResponse) model.SavedResponse {
	r.Headers = maps.Clone(r.Headers)
	r.Body = bytes.Clone(r.Body)
	return r
}

func copyRecord(r model.IdempotencyRecord) model.IdempotencyRecord {
	r.Fingerprint = bytes.Clone(r.Fingerprint)
	r.Response = copyResponse(r.Response)
	r.CreatedAt = dbTime(r.CreatedAt)
	r.CompletedAt = dbTime(r.CompletedAt)
	r.ExpiresAt = dbTime(r.ExpiresAt)
	return r
}

func copyProduct(p model.Product) model.Product {
	p.MediaIDs = cloneOrNil(p.MediaIDs)
	p.CreatedAt = dbTime(p.CreatedAt)
	p.UpdatedAt = dbTime(p.UpdatedAt)
	return p
}

func copyMedia(m model.Media) model.Media {
	m.Variants = cloneOrNil(m.Variants)
	m.CreatedAt = dbTime(m.CreatedAt)
	m.UpdatedAt = dbTime(m.UpdatedAt)
	return m
}

// cloneOrNil copies s; an empty list reads back as nil, as an empty SQL
// array or JSON array does from the PostgreSQL adapter.
func cloneOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append([]T(nil), s...)
}
