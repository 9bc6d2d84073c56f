package memory

import (
	"bytes"
	"encoding/json"
	"maps"
	"time"

	"github.com/oncehq/once/domain"
)

// The helpers below make stored values behave like database rows: times are
// kept in UTC at microsecond precision (timestamptz), and byte slices and
// maps are copied on the way in and out so no caller shares memory with the
// stored row.

func dbTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

func copyWorkspace(w domain.Workspace) domain.Workspace {
	w.CreatedAt = dbTime(w.CreatedAt)
	return w
}

func copyMember(m domain.Member) domain.Member {
	m.CreatedAt = dbTime(m.CreatedAt)
	return m
}

func copyStore(s domain.Store) domain.Store {
	s.SealedCredentials = bytes.Clone(s.SealedCredentials)
	s.CreatedAt = dbTime(s.CreatedAt)
	s.UpdatedAt = dbTime(s.UpdatedAt)
	return s
}

func copyOperation(op domain.Operation) domain.Operation {
	op.CreatedAt = dbTime(op.CreatedAt)
	op.UpdatedAt = dbTime(op.UpdatedAt)
	return op
}

func copyEvent(e domain.OutboxEvent) domain.OutboxEvent {
	e.Payload = json.RawMessage(bytes.Clone(e.Payload))
	e.NextAttemptAt = dbTime(e.NextAttemptAt)
	e.LockedUntil = dbTime(e.LockedUntil)
	e.CreatedAt = dbTime(e.CreatedAt)
	e.DispatchedAt = dbTime(e.DispatchedAt)
	return e
}

func copyResponse(r domain.SavedResponse) domain.SavedResponse {
	r.Headers = maps.Clone(r.Headers)
	r.Body = bytes.Clone(r.Body)
	return r
}

func copyRecord(r domain.IdempotencyRecord) domain.IdempotencyRecord {
	r.Fingerprint = bytes.Clone(r.Fingerprint)
	r.Response = copyResponse(r.Response)
	r.CreatedAt = dbTime(r.CreatedAt)
	r.CompletedAt = dbTime(r.CompletedAt)
	r.ExpiresAt = dbTime(r.ExpiresAt)
	return r
}

func copyProduct(p domain.Product) domain.Product {
	p.MediaIDs = cloneOrNil(p.MediaIDs)
	p.CreatedAt = dbTime(p.CreatedAt)
	p.UpdatedAt = dbTime(p.UpdatedAt)
	return p
}

func copyMedia(m domain.Media) domain.Media {
	m.Variants = cloneOrNil(m.Variants)
	m.CreatedAt = dbTime(m.CreatedAt)
	m.UpdatedAt = dbTime(m.UpdatedAt)
	return m
}

func copyCatalogItem(it domain.CatalogItem) domain.CatalogItem {
	it.SyncedAt = dbTime(it.SyncedAt)
	return it
}

func copyBilling(b domain.BillingRecord) domain.BillingRecord {
	b.CreatedAt = dbTime(b.CreatedAt)
	return b
}

// cloneOrNil copies s; an empty list reads back as nil, as an empty SQL
// array or JSON array does from the PostgreSQL adapter.
func cloneOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append([]T(nil), s...)
}
